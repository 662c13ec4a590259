// load_object(): ELF sections -> maps, functions, relocations -> linked
// programs. Relocation semantics follow what clang's BPF backend emits:
//   ld_imm64 + R_BPF_64_64 against a .maps symbol      -> map reference
//   ld_imm64 + R_BPF_64_64 against global data          -> map value + offset
//   ld_imm64 + R_BPF_64_64 against code                 -> callback
//   (BPF_PSEUDO_FUNC) call (src=1) + R_BPF_64_32 against code             ->
//   BPF-to-BPF call
// (for section symbols the instruction's imm carries the offset).
#include "runtime/vm/loader.h"

#include "runtime/vm/loader/btf_maps.h"
#include "runtime/vm/loader/elf_image.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <map>

namespace ubtrace::vm {
namespace {

using loader::ElfImage;
using loader::ElfReloc;
using loader::ElfSection;
using loader::ElfSymbol;

bool has_prefix(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_data_section_name(std::string_view name, std::string_view base) {
  return name == base || has_prefix(name, std::string(base) + ".");
}

bool is_code_section(const ElfSection &s) {
  return s.type == SHT_PROGBITS && (s.flags & SHF_EXECINSTR) && s.size > 0;
}

// A function as found in the ELF: its code with map references already
// rewritten, and the calls/callback references still to be linked.
struct FunctionCode {
  std::string name;
  uint32_t section = 0;
  uint32_t start = 0; // instruction index in its section
  bool is_program = false;
  std::vector<Insn> insns;
  struct Ref {
    uint32_t at = 0;     // instruction index in this function
    uint32_t target = 0; // index into the function list
  };
  std::vector<Ref> refs;
};

class Loader {
public:
  explicit Loader(const ElfImage &elf) : elf_(elf) {}

  Result<Object> run() {
    if (auto r = collect_btf_maps(); !r)
      return std::move(r).take_error();
    collect_data_maps();
    if (auto r = collect_functions(); !r)
      return std::move(r).take_error();
    if (auto r = resolve_references(); !r)
      return std::move(r).take_error();
    for (uint32_t i = 0; i < functions_.size(); ++i)
      if (functions_[i].is_program)
        object_.programs.push_back(link(i));
    if (const ElfSection *license = elf_.find_section("license"))
      object_.license.assign(
          reinterpret_cast<const char *>(license->bytes.data()),
          strnlen(reinterpret_cast<const char *>(license->bytes.data()),
                  license->bytes.size()));
    return std::move(object_);
  }

private:
  Result<void> collect_btf_maps() {
    if (elf_.find_section("maps"))
      return make_error("legacy 'maps' section (struct bpf_map_def) is not "
                        "supported: declare maps with BTF in '.maps'");
    const ElfSection *maps = elf_.find_section(".maps");
    if (!maps)
      return {};
    maps_section_ = maps->index;
    const ElfSection *btf = elf_.find_section(".BTF");
    if (!btf)
      return make_error("'.maps' needs BTF, but the object has no '.BTF' "
                        "section (compile with -g)");
    auto defs = loader::parse_btf_maps(btf->bytes);
    if (!defs)
      return std::move(defs).take_error();
    for (loader::BtfMapDef &def : *defs) {
      const ElfSymbol *sym = nullptr;
      for (const ElfSymbol &s : elf_.symbols())
        if (s.section == maps_section_ && s.name == def.name &&
            s.type == STT_OBJECT)
          sym = &s;
      if (!sym)
        return make_error("map '" + def.name + "' has no symbol in '.maps'");
      map_by_offset_[sym->value] = static_cast<uint32_t>(object_.maps.size());
      MapDef map;
      map.name = std::move(def.name);
      map.type = def.type;
      map.key_size = def.key_size;
      map.value_size = def.value_size;
      map.max_entries = def.max_entries;
      map.flags = def.flags;
      object_.maps.push_back(std::move(map));
    }
    return {};
  }

  // One single-element array map per global data section, as libbpf does.
  void collect_data_maps() {
    for (const ElfSection &s : elf_.sections()) {
      if (!(s.flags & SHF_ALLOC) || s.size == 0 ||
          (s.type != SHT_PROGBITS && s.type != SHT_NOBITS))
        continue;
      bool rodata = is_data_section_name(s.name, ".rodata");
      if (!rodata && !is_data_section_name(s.name, ".data") &&
          !is_data_section_name(s.name, ".bss"))
        continue;
      MapDef map;
      map.name = s.name;
      map.type = BPF_MAP_TYPE_ARRAY;
      map.key_size = 4;
      map.value_size = static_cast<uint32_t>(s.size);
      map.max_entries = 1;
      map.flags = BPF_F_MMAPABLE | (rodata ? BPF_F_RDONLY_PROG : 0);
      map.is_global_data = true;
      map.read_only = rodata;
      map.initial_value = s.bytes;
      map.initial_value.resize(s.size, 0);
      uint32_t index = static_cast<uint32_t>(object_.maps.size());
      data_map_by_section_[s.index] = index;
      object_.maps.push_back(std::move(map));
      for (const ElfSymbol &sym : elf_.symbols())
        if (sym.section == s.index && sym.type == STT_OBJECT &&
            sym.value + sym.size <= s.size)
          object_.globals.push_back({sym.name, index,
                                     static_cast<uint32_t>(sym.value),
                                     static_cast<uint32_t>(sym.size)});
    }
  }

  Result<void> collect_functions() {
    for (const ElfSection &s : elf_.sections()) {
      if (!is_code_section(s))
        continue;
      if (s.size % sizeof(Insn) != 0)
        return make_error("code section '" + s.name +
                          "' is not a whole number of instructions");
      std::vector<const ElfSymbol *> syms;
      for (const ElfSymbol &sym : elf_.symbols())
        if (sym.section == s.index && sym.type == STT_FUNC)
          syms.push_back(&sym);
      std::sort(syms.begin(), syms.end(),
                [](auto *a, auto *b) { return a->value < b->value; });
      bool is_text = s.name == ".text";
      if (syms.empty()) {
        // Hand-made objects may omit symbols: the section is one program.
        add_function(s, s.name, 0, s.size, !is_text);
        continue;
      }
      for (size_t i = 0; i < syms.size(); ++i) {
        const ElfSymbol &sym = *syms[i];
        uint64_t end = i + 1 < syms.size() ? syms[i + 1]->value : s.size;
        uint64_t size = sym.size ? sym.size : end - sym.value;
        if (sym.value % sizeof(Insn) || size % sizeof(Insn) ||
            sym.value + size > s.size || size == 0)
          return make_error("function '" + sym.name + "' in '" + s.name +
                            "' has a malformed extent");
        add_function(s, sym.name, sym.value, size, !is_text);
      }
    }
    return {};
  }

  void add_function(const ElfSection &s, const std::string &name,
                    uint64_t offset, uint64_t size, bool is_program) {
    FunctionCode fn;
    fn.name = name;
    fn.section = s.index;
    fn.start = static_cast<uint32_t>(offset / sizeof(Insn));
    fn.is_program = is_program;
    fn.insns.resize(size / sizeof(Insn));
    memcpy(fn.insns.data(), s.bytes.data() + offset, size);
    function_at_[{s.index, fn.start}] =
        static_cast<uint32_t>(functions_.size());
    functions_.push_back(std::move(fn));
  }

  // The function containing instruction `insn` of section `section`.
  FunctionCode *function_containing(uint32_t section, uint64_t insn) {
    for (FunctionCode &fn : functions_)
      if (fn.section == section && insn >= fn.start &&
          insn < fn.start + fn.insns.size())
        return &fn;
    return nullptr;
  }

  Result<uint32_t> function_starting(uint32_t section, int64_t insn,
                                     const std::string &where) {
    auto it = function_at_.find({section, insn});
    if (insn < 0 || it == function_at_.end())
      return make_error(where + " targets instruction " + std::to_string(insn) +
                        " of '" + elf_.sections()[section].name +
                        "', which is not the start of a function");
    return it->second;
  }

  Result<void> resolve_references() {
    for (const ElfSection &s : elf_.sections()) {
      if (!is_code_section(s))
        continue;
      for (const ElfReloc &rel : elf_.relocations_for(s.index))
        if (auto r = apply_reloc(s, rel); !r)
          return r;
    }
    // Calls inside one section need no relocation: imm is already relative.
    for (uint32_t f = 0; f < functions_.size(); ++f) {
      FunctionCode &fn = functions_[f];
      for (uint32_t i = 0; i < fn.insns.size(); ++i) {
        const Insn &insn = fn.insns[i];
        if (!is_pseudo_call(insn) || has_ref(fn, i))
          continue;
        std::string where = "call at instruction " + std::to_string(i) +
                            " of '" + fn.name + "'";
        auto target = function_starting(
            fn.section, int64_t(fn.start) + i + 1 + insn.imm, where);
        if (!target)
          return std::move(target).take_error();
        fn.refs.push_back({i, *target});
      }
    }
    return {};
  }

  static bool has_ref(const FunctionCode &fn, uint32_t at) {
    for (const auto &ref : fn.refs)
      if (ref.at == at)
        return true;
    return false;
  }

  Result<void> apply_reloc(const ElfSection &s, const ElfReloc &rel) {
    if (rel.offset % sizeof(Insn))
      return make_error("misaligned relocation in '" + s.name + "'");
    uint64_t index = rel.offset / sizeof(Insn);
    FunctionCode *fn = function_containing(s.index, index);
    if (!fn)
      return make_error("relocation in '" + s.name + "' outside any function");
    if (rel.symbol >= elf_.symbols().size())
      return make_error("relocation in '" + s.name +
                        "' names a symbol that does not exist");
    const ElfSymbol &sym = elf_.symbols()[rel.symbol];
    uint32_t at = static_cast<uint32_t>(index - fn->start);
    Insn &insn = fn->insns[at];
    std::string where =
        "instruction " + std::to_string(at) + " of '" + fn->name + "'";
    std::string sym_name =
        sym.name.empty() && sym.section < elf_.sections().size()
            ? elf_.sections()[sym.section].name
            : sym.name;
    if (sym.section == SHN_UNDEF)
      return make_error(where + " refers to unresolved extern '" + sym.name +
                        "' (externs, kconfig and ksyms are not supported)");
    if (sym.section >= elf_.sections().size())
      return make_error(where + " refers to '" + sym_name +
                        "' in an unknown section");
    const ElfSection &target = elf_.sections()[sym.section];
    if (is_call(insn)) {
      if (insn.src != BPF_PSEUDO_CALL || !is_code_section(target))
        return make_error(where + ": relocated call to '" + sym_name +
                          "' is not a BPF-to-BPF call");
      auto callee = function_starting(
          target.index, int64_t(sym.value / sizeof(Insn)) + insn.imm + 1,
          where);
      if (!callee)
        return std::move(callee).take_error();
      fn->refs.push_back({at, *callee});
      return {};
    }
    if (!is_ld_imm64(insn) || at + 1 >= fn->insns.size())
      return make_error(where + ": relocation against '" + sym_name +
                        "' on an instruction that is not ld_imm64");
    Insn &hi = fn->insns[at + 1];
    int64_t offset = int64_t(sym.value) + insn.imm;
    if (target.index == maps_section_) {
      auto it = map_by_offset_.find(static_cast<uint64_t>(offset));
      if (it == map_by_offset_.end())
        return make_error(where + " refers to '" + sym_name +
                          "', which is not a map in '.maps'");
      insn.src = BPF_PSEUDO_MAP_FD;
      insn.imm = static_cast<int32_t>(it->second);
      hi.imm = 0;
      return {};
    }
    if (auto it = data_map_by_section_.find(target.index);
        it != data_map_by_section_.end()) {
      if (offset < 0 || uint64_t(offset) >= target.size)
        return make_error(where + " refers to offset " +
                          std::to_string(offset) + " outside '" + target.name +
                          "'");
      insn.src = BPF_PSEUDO_MAP_VALUE;
      insn.imm = static_cast<int32_t>(it->second);
      hi.imm = static_cast<int32_t>(offset);
      return {};
    }
    if (is_code_section(target)) {
      if (offset % sizeof(Insn))
        return make_error(where + ": misaligned callback reference");
      auto callee =
          function_starting(target.index, offset / sizeof(Insn), where);
      if (!callee)
        return std::move(callee).take_error();
      insn.src = BPF_PSEUDO_FUNC;
      hi.imm = 0;
      fn->refs.push_back({at, *callee});
      return {};
    }
    return make_error(where + " refers to '" + sym_name + "' in section '" +
                      target.name +
                      "', which is neither a map, global data "
                      "nor code");
  }

  // The program `root` followed by every function it reaches, each once;
  // call and callback offsets rewritten relative to the linked layout.
  Program link(uint32_t root) {
    Program program;
    const FunctionCode &main = functions_[root];
    program.name = main.name;
    program.section = elf_.sections()[main.section].name;
    std::vector<uint32_t> order{root};
    std::map<uint32_t, uint32_t> base; // function -> start in program
    for (size_t i = 0; i < order.size(); ++i) {
      const FunctionCode &fn = functions_[order[i]];
      base[order[i]] = static_cast<uint32_t>(program.insns.size());
      program.functions.push_back({fn.name, base[order[i]]});
      program.insns.insert(program.insns.end(), fn.insns.begin(),
                           fn.insns.end());
      for (const auto &ref : fn.refs)
        if (std::find(order.begin(), order.end(), ref.target) == order.end())
          order.push_back(ref.target);
    }
    for (uint32_t f : order) {
      for (const auto &ref : functions_[f].refs) {
        uint32_t pc = base[f] + ref.at;
        program.insns[pc].imm =
            static_cast<int32_t>(int64_t(base[ref.target]) - (pc + 1));
      }
    }
    return program;
  }

  const ElfImage &elf_;
  Object object_;
  uint32_t maps_section_ = UINT32_MAX;
  std::map<uint64_t, uint32_t> map_by_offset_;
  std::map<uint32_t, uint32_t> data_map_by_section_;
  std::vector<FunctionCode> functions_;
  std::map<std::pair<uint32_t, int64_t>, uint32_t> function_at_;
};

} // namespace

Result<Object> load_object(std::span<const uint8_t> elf_bytes) {
  auto elf = ElfImage::read(elf_bytes);
  if (!elf)
    return std::move(elf).take_error();
  return Loader(*elf).run();
}

const Program *Object::find_program(std::string_view name) const {
  for (const Program &p : programs)
    if (p.name == name)
      return &p;
  for (const Program &p : programs)
    if (p.section == name)
      return &p;
  return nullptr;
}

const GlobalVar *Object::find_global(std::string_view name) const {
  for (const GlobalVar &g : globals)
    if (g.name == name)
      return &g;
  return nullptr;
}

std::optional<uint32_t> Object::find_map(std::string_view name) const {
  for (uint32_t i = 0; i < maps.size(); ++i)
    if (maps[i].name == name)
      return i;
  return std::nullopt;
}

} // namespace ubtrace::vm
