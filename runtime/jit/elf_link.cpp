// Layout and relocation of one relocatable object into a flat image (see
// elf_link.h).
#include "runtime/jit/elf_link.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <limits>
#include <map>

namespace ubtrace::jit::elf {
namespace {

constexpr uint64_t kGotSlot = 8;
constexpr uint64_t kStubSize = 8; // jmp *rel32(%rip); int3; int3

uint64_t align_up(uint64_t v, uint64_t align) {
  return (v + align - 1) & ~(align - 1);
}

bool is_placed(const Section &s) {
  return (s.flags & SHF_ALLOC) && s.type != SHT_X86_64_UNWIND &&
         s.name != ".eh_frame";
}

bool is_got_relative(uint32_t type) {
  return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX ||
         type == R_X86_64_REX_GOTPCRELX;
}

bool is_undefined(const Symbol &s) {
  return s.shndx == SHN_UNDEF;
}

std::string reloc_name(uint32_t type) {
  switch (type) {
  case R_X86_64_64:
    return "R_X86_64_64";
  case R_X86_64_PC32:
    return "R_X86_64_PC32";
  case R_X86_64_PC64:
    return "R_X86_64_PC64";
  case R_X86_64_PLT32:
    return "R_X86_64_PLT32";
  case R_X86_64_GOTPCREL:
    return "R_X86_64_GOTPCREL";
  case R_X86_64_GOTPCRELX:
    return "R_X86_64_GOTPCRELX";
  case R_X86_64_REX_GOTPCRELX:
    return "R_X86_64_REX_GOTPCRELX";
  case R_X86_64_32:
    return "R_X86_64_32";
  case R_X86_64_32S:
    return "R_X86_64_32S";
  }
  return "relocation type " + std::to_string(type);
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() &&
         v <= std::numeric_limits<int32_t>::max();
}

template <class T> void put(std::vector<uint8_t> &bytes, uint64_t at, T v) {
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

// Relocations of the sections that go into the image.
template <class F> void for_each_placed_reloc(const Relocatable &o, F f) {
  for (const Reloc &r : o.relocs)
    if (r.section < o.sections.size() && is_placed(o.sections[r.section]))
      f(r);
}

} // namespace

Result<Plan> plan(const Relocatable &o) {
  Plan p;
  p.section_offset.assign(o.sections.size(), kNotPlaced);
  uint64_t end = 0;
  for (int pass = 0; pass < 2; ++pass) { // code first, then data
    for (size_t i = 0; i < o.sections.size(); ++i) {
      const Section &s = o.sections[i];
      bool code = (s.flags & SHF_EXECINSTR) != 0;
      if (!is_placed(s) || code != (pass == 0))
        continue;
      if ((s.flags & SHF_WRITE) && s.size > 0)
        return make_error("the object has a writable section " + s.name +
                          "; images are mapped read-only");
      end = align_up(end, s.align);
      p.section_offset[i] = end;
      end += s.size;
      p.align = std::max(p.align, s.align);
    }
  }

  std::map<uint32_t, size_t> got_slot, stub;
  std::vector<std::string> undefined;
  for_each_placed_reloc(o, [&](const Reloc &r) {
    const Symbol &sym = o.symbols[r.symbol];
    if (is_undefined(sym) && !sym.name.empty())
      undefined.push_back(sym.name);
    bool needs_stub = r.type == R_X86_64_PLT32 && is_undefined(sym);
    if ((is_got_relative(r.type) || needs_stub) && !got_slot.count(r.symbol)) {
      got_slot[r.symbol] = p.got.size();
      p.got.push_back(r.symbol);
    }
    if (needs_stub && !stub.count(r.symbol)) {
      stub[r.symbol] = p.stubs.size();
      p.stubs.push_back(r.symbol);
    }
  });
  p.got_offset = align_up(end, kGotSlot);
  p.stubs_offset = p.got_offset + p.got.size() * kGotSlot;
  p.size = p.stubs_offset + p.stubs.size() * kStubSize;
  p.align = std::max<uint64_t>(p.align, kGotSlot);
  std::sort(undefined.begin(), undefined.end());
  undefined.erase(std::unique(undefined.begin(), undefined.end()),
                  undefined.end());
  p.undefined = std::move(undefined);
  return p;
}

Result<std::vector<uint8_t>> link(const Relocatable &o, const Plan &p,
                                  uint64_t load, const Symbols &symbols) {
  if (load % p.align != 0)
    return make_error("load address " + std::to_string(load) +
                      " is not aligned to " + std::to_string(p.align));
  std::vector<uint8_t> bytes(p.size, 0);
  for (size_t i = 0; i < o.sections.size(); ++i)
    if (p.section_offset[i] != kNotPlaced && !o.sections[i].data.empty())
      std::memcpy(bytes.data() + p.section_offset[i], o.sections[i].data.data(),
                  o.sections[i].data.size());

  std::vector<std::string> missing;
  auto address_of = [&](uint32_t index) -> Result<uint64_t> {
    const Symbol &sym = o.symbols[index];
    if (is_undefined(sym)) {
      if (auto it = symbols.find(sym.name); it != symbols.end())
        return it->second;
      if (sym.binding == STB_WEAK)
        return uint64_t(0);
      missing.push_back(sym.name);
      return uint64_t(0); // reported below, all at once
    }
    if (sym.shndx == SHN_ABS)
      return sym.value;
    if (sym.shndx >= SHN_LORESERVE || sym.shndx >= o.sections.size())
      return make_error("symbol " + sym.name + " has an unsupported section " +
                        std::to_string(sym.shndx));
    if (p.section_offset[sym.shndx] == kNotPlaced)
      return make_error("symbol " + sym.name + " is in section " +
                        o.sections[sym.shndx].name +
                        ", which is not part of the image");
    return load + p.section_offset[sym.shndx] + sym.value;
  };

  std::map<uint32_t, uint64_t> got_address, stub_address;
  for (size_t k = 0; k < p.got.size(); ++k) {
    auto target = address_of(p.got[k]);
    if (!target)
      return std::move(target).take_error();
    uint64_t at = p.got_offset + k * kGotSlot;
    put<uint64_t>(bytes, at, *target);
    got_address[p.got[k]] = load + at;
  }
  for (size_t k = 0; k < p.stubs.size(); ++k) {
    uint64_t at = p.stubs_offset + k * kStubSize;
    int64_t rel = int64_t(got_address.at(p.stubs[k]) - (load + at + 6));
    bytes[at] = 0xff; // jmp *rel32(%rip)
    bytes[at + 1] = 0x25;
    put<int32_t>(bytes, at + 2, int32_t(rel));
    bytes[at + 6] = bytes[at + 7] = 0xcc;
    stub_address[p.stubs[k]] = load + at;
  }

  Result<void> status;
  for_each_placed_reloc(o, [&](const Reloc &r) {
    if (!status || r.type == R_X86_64_NONE)
      return;
    const Section &section = o.sections[r.section];
    const Symbol &sym = o.symbols[r.symbol];
    auto fail = [&](const std::string &why) {
      status =
          make_error(reloc_name(r.type) + " at " + section.name + "+" +
                     std::to_string(r.offset) + " against " +
                     (sym.name.empty() ? "a section" : sym.name) + ": " + why);
    };
    uint64_t width = r.type == R_X86_64_64 || r.type == R_X86_64_PC64 ? 8 : 4;
    if (r.offset > section.size || section.size - r.offset < width)
      return fail("outside its section");
    uint64_t at = p.section_offset[r.section] + r.offset;
    uint64_t pc = load + at;
    auto s = address_of(r.symbol);
    if (!s)
      return fail(s.error());
    int64_t value = 0;
    switch (r.type) {
    case R_X86_64_64:
      put<uint64_t>(bytes, at, *s + uint64_t(r.addend));
      return;
    case R_X86_64_PC64:
      put<uint64_t>(bytes, at, *s + uint64_t(r.addend) - pc);
      return;
    case R_X86_64_PC32:
      value = int64_t(*s + uint64_t(r.addend) - pc);
      break;
    case R_X86_64_PLT32:
      value = int64_t(*s + uint64_t(r.addend) - pc);
      if (!fits_i32(value) && stub_address.count(r.symbol))
        value = int64_t(stub_address[r.symbol] + uint64_t(r.addend) - pc);
      break;
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX:
      value = int64_t(got_address.at(r.symbol) + uint64_t(r.addend) - pc);
      break;
    case R_X86_64_32: {
      uint64_t v = *s + uint64_t(r.addend);
      if (v > std::numeric_limits<uint32_t>::max())
        return fail("the address does not fit 32 bits (link below 4 GiB, or "
                    "compile position-independent code)");
      put<uint32_t>(bytes, at, uint32_t(v));
      return;
    }
    case R_X86_64_32S:
      value = int64_t(*s + uint64_t(r.addend));
      break;
    default:
      return fail("unsupported relocation type");
    }
    if (!fits_i32(value))
      return fail("the target is out of 32-bit range");
    put<int32_t>(bytes, at, int32_t(value));
  });
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    std::string names;
    for (const std::string &m : missing)
      names += (names.empty() ? "" : ", ") + m;
    return make_error("undefined symbols: " + names);
  }
  if (!status)
    return std::move(status).take_error();
  return bytes;
}

uint64_t symbol_offset(const Relocatable &o, const Plan &p,
                       const std::string &name) {
  for (const Symbol &sym : o.symbols) {
    if (sym.name != name || is_undefined(sym) || sym.shndx >= o.sections.size())
      continue;
    if (p.section_offset[sym.shndx] == kNotPlaced)
      return kNotPlaced;
    return p.section_offset[sym.shndx] + sym.value;
  }
  return kNotPlaced;
}

} // namespace ubtrace::jit::elf
