#include "backends/cli/debug_types.h"

#include "runtime/abi.h"
#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/demangle.h"
#include "runtime/symbols/dwarf_types.h"
#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/elf_symbols.h"
#include "runtime/symbols/wildcard.h"

#include <algorithm>

namespace ubtrace::cli {

namespace sym = runtime::symbols;
using Kind = sym::DwarfType::Kind;

DwarfDebugTypes::DwarfDebugTypes(pid_t pid) : pid_(pid) {}
DwarfDebugTypes::~DwarfDebugTypes() = default;

const sym::DwarfTypes *DwarfDebugTypes::open_path(const std::string &path,
                                                  std::string &error) {
  if (auto it = by_path_.find(path); it != by_path_.end())
    return it->second.get();
  if (auto it = failed_.find(path); it != failed_.end()) {
    error = it->second;
    return nullptr;
  }
  std::string why;
  auto dw = sym::DwarfTypes::open(path, &why);
  if (!dw) {
    failed_[path] = why;
    error = why;
    return nullptr;
  }
  return (by_path_[path] = std::move(dw)).get();
}

const sym::DwarfTypes *DwarfDebugTypes::open(const std::string &target,
                                             std::string &error,
                                             std::string *path) {
  sym::BinaryResolveOptions options;
  if (pid_ > 0) {
    options.pid = pid_;
    options.root = sym::process_root(pid_);
  }
  auto files = sym::resolve_binary(target, options);
  if (!files) {
    error = files.error();
    return nullptr;
  }
  if (files->empty()) {
    error = "no binary matches '" + target + "'";
    return nullptr;
  }
  if (files->size() > 1) {
    error = "'" + target + "' matches " + std::to_string(files->size()) +
            " binaries; name one to read its DWARF";
    return nullptr;
  }
  if (path)
    *path = files->front().path;
  return open_path(files->front().path, error);
}

// The functions called `name` in the DWARF, else those at the address of
// the ELF symbol `name` (an alias: libc's malloc is __libc_malloc there).
std::vector<sym::DwarfFunction>
DwarfDebugTypes::named(const sym::DwarfTypes &dw, const std::string &path,
                       const std::string &name) {
  auto fns = dw.functions(name);
  if (!fns.empty() || path.empty())
    return fns;
  auto it = symbols_.find(path);
  if (it == symbols_.end()) {
    std::unique_ptr<sym::SymbolTable> table;
    if (auto elf = sym::ElfFile::open(path))
      if (auto t = sym::SymbolTable::load(*elf))
        table = std::make_unique<sym::SymbolTable>(std::move(*t));
    it = symbols_.emplace(path, std::move(table)).first;
  }
  if (!it->second)
    return fns;
  for (const sym::ElfSymbol *s : it->second->functions_named(name))
    for (auto &f : dw.functions_at(s->vaddr))
      fns.push_back(std::move(f));
  return fns;
}

namespace {

// Bytes at `offset` of a record, as the front end's bitfields read them:
// a word of the member's type holding all its bits.
void place_bitfield(ast::Field &f, uint64_t offset, uint32_t bit_offset,
                    uint32_t bits, uint32_t size) {
  uint64_t first_bit = offset * 8 + bit_offset;
  uint64_t unit = size ? size * 8 : 8;
  uint64_t base = first_bit / unit * unit;
  if (first_bit + bits > base + unit) // straddles: read from its byte
    base = first_bit / 8 * 8;
  f.offset = static_cast<uint32_t>(base / 8);
  f.bitfield_shift = static_cast<uint32_t>(first_bit - base);
  f.bitfield_bits = bits;
}

bool is_plain_char(const sym::DwarfTypes &dw, int index) {
  int r = dw.resolved(index);
  if (r < 0)
    return false;
  const auto &t = dw.type(r);
  return t.kind == Kind::Int && t.size == 1 &&
         (t.name == "char" || t.name == "char8_t");
}

} // namespace

ast::Type DwarfDebugTypes::convert(const sym::DwarfTypes &dw, int index,
                                   ast::CTypes &types) {
  int r = dw.resolved(index);
  if (r < 0)
    return ast::make_void();
  const sym::DwarfType &t = dw.type(r);
  switch (t.kind) {
  case Kind::Void:
  case Kind::Function:
    return ast::make_void();
  case Kind::Int:
    if (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8)
      return ast::make_int(static_cast<uint32_t>(t.size), t.is_signed);
    // __int128 and friends: their bytes.
    return ast::make_array(ast::make_int(1, false),
                           static_cast<uint32_t>(t.size));
  case Kind::Bool:
    return t.size == 1 ? ast::make_bool()
                       : ast::make_int(static_cast<uint32_t>(t.size), false);
  case Kind::Float:
    return ast::make_simple(ast::TypeKind::Float,
                            static_cast<uint32_t>(t.size));
  case Kind::Pointer: {
    if (t.elem < 0)
      return ast::make_pointer(ast::make_void());
    return ast::make_pointer(convert(dw, t.elem, types));
  }
  case Kind::Array: {
    if (t.elem >= 0 && is_plain_char(dw, t.elem)) {
      // char arrays are strings, as C definitions make them.
      ast::Type s = ast::make_string(static_cast<uint32_t>(t.count));
      s.c_chars = true;
      return s;
    }
    return ast::make_array(convert(dw, t.elem, types),
                           static_cast<uint32_t>(t.count));
  }
  case Kind::Enum: {
    std::string name = t.name.substr(5); // "enum "
    ast::Type out =
        ast::make_int(static_cast<uint32_t>(t.size ? t.size : 4), t.is_signed);
    if (name == "(anonymous)")
      return out;
    out.name = name;
    if (!types.enums.count(name)) {
      auto &values = types.enums[name];
      for (const auto &[n, v] : t.enumerators)
        values.emplace(v, n);
    }
    return out;
  }
  case Kind::Struct:
  case Kind::Union: {
    bool anonymous = t.name.ends_with("(anonymous)");
    if (!anonymous) {
      auto it = types.records.find(t.name);
      if (it != types.records.end() &&
          (!it->second.fields.empty() || it->second.size > 0))
        return it->second; // the script's definition, or one imported
      if (in_progress_.count(t.name) || t.declaration) {
        // A record that points at itself (or is only declared here): by
        // name; field reads complete it.
        ast::Type ref = ast::make_simple(ast::TypeKind::CStruct, 0);
        ref.name = t.name;
        ref.is_union = t.kind == Kind::Union;
        return ref;
      }
      in_progress_.insert(t.name);
    }
    ast::Type rec =
        ast::make_simple(ast::TypeKind::CStruct, static_cast<uint32_t>(t.size));
    rec.name = t.name;
    rec.is_union = t.kind == Kind::Union;
    for (const auto &m : t.members) {
      if (m.name.empty())
        continue;
      ast::Type ft = convert(dw, m.type, types);
      if (ft.is_none() || ft.is(ast::TypeKind::Void))
        continue;
      ast::Field f;
      f.name = m.name;
      f.offset = static_cast<uint32_t>(m.offset);
      if (m.bit_size)
        place_bitfield(f, m.offset, m.bit_offset, m.bit_size, ft.size);
      f.type = std::make_shared<const ast::Type>(std::move(ft));
      rec.fields.push_back(std::move(f));
    }
    if (!anonymous) {
      in_progress_.erase(t.name);
      types.records[t.name] = rec;
    }
    return rec;
  }
  case Kind::Typedef:
  case Kind::Const:
    break; // resolved above
  }
  return ast::Type{};
}

namespace {

// An integer, bool, enum or pointer that one general register holds.
bool in_one_register(const sym::DwarfType &t) {
  return (t.kind == Kind::Int || t.kind == Kind::Bool || t.kind == Kind::Enum ||
          t.kind == Kind::Pointer) &&
         t.size <= 8;
}

// A DWARF register number (x86-64 psABI) as the probe's pt_regs has it:
// its offset there, and which argument register it is (-1: none).
std::optional<std::pair<uint32_t, int>> pt_regs_of(int dwarf_reg) {
  static const uint32_t kOffsets[16] = {
      abi::kRax, abi::kRdx, abi::kRcx, abi::kRbx, abi::kRsi, abi::kRdi,
      abi::kRbp, abi::kRsp, abi::kR8,  abi::kR9,  abi::kR10, abi::kR11,
      abi::kR12, abi::kR13, abi::kR14, abi::kR15};
  if (dwarf_reg < 0 || dwarf_reg >= 16)
    return std::nullopt;
  uint32_t offset = kOffsets[dwarf_reg];
  for (int i = 0; i < 6; i++)
    if (abi::kArgRegs[i] == offset)
      return std::make_pair(offset, i);
  return std::make_pair(offset, -1);
}

} // namespace

// A function the compiler called its own way (DW_CC_nocall: Rust and C
// functions it could see every call of, arguments dropped or constants
// propagated): each parameter is where its DWARF location says at the
// entry, a register or a constant; the rest cannot be read there.
ast::FunctionArgs DwarfDebugTypes::describe_nocall(const sym::DwarfTypes &dw,
                                                   const sym::DwarfFunction &fn,
                                                   ast::CTypes &types) {
  using At = sym::DwarfFunction::Param::At;
  ast::FunctionArgs out;
  std::vector<std::string> names;
  std::vector<ast::Type> elems;
  for (const auto &p : fn.params) {
    out.declared.push_back(dw.spelled(p.type) +
                           (p.name.empty() ? "" : " " + p.name));
    if (p.name.empty())
      continue;
    std::string why;
    ast::ArgPlace at;
    auto regs = p.at == At::Register ? pt_regs_of(p.dwarf_reg) : std::nullopt;
    if (p.at == At::Constant) {
      at = {.kind = ast::ArgPlace::Kind::Constant, .value = p.value};
    } else if (regs) {
      at = {.kind = ast::ArgPlace::Kind::Register,
            .slot = regs->second,
            .regs_offset = regs->first};
    } else {
      why = p.at == At::Gone
                ? "the compiler optimised it out of the function's entry"
                : "the compiler called this function its own way "
                  "(DW_CC_nocall) and left it where args does not read";
    }
    ast::Type ft;
    if (why.empty()) {
      int r = dw.resolved(p.type);
      if (r < 0 || !in_one_register(dw.type(r)))
        why = "it is not an integer or pointer in one register";
      else if ((ft = convert(dw, p.type, types)).is_none())
        why = "its type cannot be represented";
    }
    if (!why.empty()) {
      out.unreadable[p.name] = why;
      continue;
    }
    names.push_back(p.name);
    elems.push_back(std::move(ft));
    out.places.push_back(at);
  }
  out.record = ast::make_record(std::move(names), std::move(elems));
  out.ret = return_type(dw, fn, types);
  return out;
}

ast::FunctionArgs DwarfDebugTypes::describe(const sym::DwarfTypes &dw,
                                            const sym::DwarfFunction &fn,
                                            ast::CTypes &types) {
  ast::FunctionArgs out;
  std::vector<std::string> names;
  std::vector<ast::Type> elems;
  if (fn.nocall)
    return describe_nocall(dw, fn, types);
  int slot = 0;
  // Set once an argument's place is beyond what the convention lets us
  // follow from the types alone.
  std::string lost;
  bool on_stack = false; // something went to memory: stack slots shift
  for (size_t i = 0; i < fn.params.size(); i++) {
    const auto &p = fn.params[i];
    std::string name = p.name.empty() ? "" : p.name;
    out.declared.push_back(dw.spelled(p.type) +
                           (name.empty() ? "" : " " + name));
    int r = dw.resolved(p.type);
    const sym::DwarfType *t = r >= 0 ? &dw.type(r) : nullptr;
    Kind k = t ? t->kind : Kind::Void;
    uint64_t size = t ? t->size : 0;
    auto skip = [&](const std::string &why) {
      if (!name.empty())
        out.unreadable[name] = why;
    };
    if (!lost.empty()) {
      skip(lost);
      continue;
    }
    bool integer = t && in_one_register(*t);
    if (k == Kind::Float) {
      skip("it is passed in an SSE register, which probes do not read");
      continue;
    }
    if (integer) {
      if (slot >= 6 && on_stack) {
        skip("a structure passed by value on the stack before it moves it");
        continue;
      }
      if (!name.empty()) {
        ast::Type ft = convert(dw, p.type, types);
        if (ft.is_none()) {
          skip("its type cannot be represented");
        } else {
          names.push_back(name);
          elems.push_back(std::move(ft));
          out.places.push_back(
              {.kind = ast::ArgPlace::Kind::Slot, .slot = slot});
        }
      }
      slot++;
      continue;
    }
    if (k == Kind::Int && size == 16) {
      skip("128-bit integers take two registers; read them with arg" +
           std::to_string(slot) + " and arg" + std::to_string(slot + 1));
      if (slot + 2 > 6)
        on_stack = true;
      slot += 2;
      continue;
    }
    if ((k == Kind::Struct || k == Kind::Union) && size > 16) {
      skip("a " + std::string(k == Kind::Union ? "union" : "structure") +
           " passed by value is copied to the stack, which args does not "
           "read");
      on_stack = true;
      continue;
    }
    // A small record by value, an array or something unmodelled: its
    // registers depend on its members' classes.
    lost = "it comes after '" + out.declared.back() +
           "', whose registers depend on how its members are classified";
    skip("a " + dw.spelled(p.type) +
         " passed by value is split over registers, which args does not "
         "read");
  }
  out.record = ast::make_record(std::move(names), std::move(elems));
  out.ret = return_type(dw, fn, types);
  return out;
}

ast::Type DwarfDebugTypes::return_type(const sym::DwarfTypes &dw,
                                       const sym::DwarfFunction &fn,
                                       ast::CTypes &types) {
  int rr = dw.resolved(fn.ret);
  if (rr < 0 || !in_one_register(dw.type(rr)))
    return {};
  return convert(dw, fn.ret, types);
}

namespace {

// The functions of `dw` a uprobe's FUNC names: the DWARF name, linkage
// name, or (cpp) demangled name without parameters; wildcards as the
// attach does.
std::vector<sym::DwarfFunction> matching(const sym::DwarfTypes &dw,
                                         const ast::AttachPoint &ap) {
  sym::Wildcard w(ap.func);
  std::vector<sym::DwarfFunction> out;
  for (auto &f : dw.all_functions()) {
    bool hit = (f.linkage.empty() && w.matches(f.name)) ||
               (!f.linkage.empty() && w.matches(f.linkage));
    if (!hit && !f.linkage.empty() && ap.lang == "cpp")
      hit = w.matches(sym::strip_parameters(sym::demangle_or_self(f.linkage)));
    if (hit)
      out.push_back(std::move(f));
  }
  return out;
}

} // namespace

std::optional<ast::FunctionArgs>
DwarfDebugTypes::function_args(const ast::AttachPoint &ap, ast::CTypes &types,
                               std::string &error) {
  if (ap.has_address || ap.has_offset) {
    error = "args needs a function: " + ap.name() +
            " is an address or an offset into one";
    return std::nullopt;
  }
  std::string path;
  const sym::DwarfTypes *dw = open(ap.target, error, &path);
  if (!dw) {
    error = "args needs DWARF: " + error;
    return std::nullopt;
  }
  auto fns = ap.wildcard ? matching(*dw, ap) : named(*dw, path, ap.func);
  if (fns.empty()) {
    error = "args: the DWARF of " + dw->source() + " describes no function " +
            ap.func;
    return std::nullopt;
  }
  std::optional<ast::FunctionArgs> out;
  std::string first;
  for (const auto &fn : fns) {
    ast::FunctionArgs fa = describe(*dw, fn, types);
    if (!out) {
      out = std::move(fa);
      first = fn.linkage.empty() ? fn.name : fn.linkage;
      continue;
    }
    if (!ast::same_type(out->record, fa.record) || out->places != fa.places) {
      error = "args: the functions " + ap.func +
              " matches differ in their "
              "arguments (" +
              first + ": " + ast::type_str(out->record) + ", " +
              (fn.linkage.empty() ? fn.name : fn.linkage) + ": " +
              ast::type_str(fa.record) + ")";
      return std::nullopt;
    }
  }
  return out;
}

bool DwarfDebugTypes::import_type(
    const std::string &name, const std::vector<const ast::AttachPoint *> &from,
    ast::CTypes &types) {
  std::set<std::string> seen;
  for (const auto *ap : from) {
    if (ap->target.empty() || sym::has_wildcard(ap->target) ||
        !seen.insert(ap->target).second)
      continue;
    std::string error;
    const sym::DwarfTypes *dw = open(ap->target, error);
    if (!dw)
      continue;
    auto index = dw->named_type(name);
    if (!index)
      continue;
    const auto &t = dw->type(*index);
    if ((t.kind == Kind::Struct || t.kind == Kind::Union) && t.declaration)
      continue; // only declared in this binary
    ast::Type converted = convert(*dw, *index, types);
    if (t.kind == Kind::Typedef) {
      if (converted.is_none())
        continue;
      types.typedefs[name] = converted;
    }
    return true;
  }
  return false;
}

std::optional<uint64_t>
DwarfDebugTypes::line_address(const ast::AttachPoint &ap, std::string &error) {
  std::string why;
  const sym::DwarfTypes *dw = open(ap.target, why);
  if (!dw) {
    error = "No DWARF debug info found for '" + ap.target +
            "', cannot attach by source code location (" + why + ")";
    return std::nullopt;
  }
  auto addrs = dw->line_addresses(ap.source_file, ap.line, ap.column);
  if (addrs.empty()) {
    error = "Unable to map '" + ap.source_file + ":" + std::to_string(ap.line) +
            (ap.column ? ":" + std::to_string(ap.column) : "") +
            "' to address: no statement of " + dw->source() + " is there";
    return std::nullopt;
  }
  return addrs.front();
}

std::vector<std::string>
DwarfDebugTypes::declared_params(const std::string &path,
                                 const std::string &func) {
  std::string error;
  const sym::DwarfTypes *dw = open_path(path, error);
  if (!dw)
    return {};
  auto fns = named(*dw, path, func);
  if (fns.empty())
    return {};
  std::vector<std::string> out;
  for (const auto &p : fns.front().params)
    out.push_back(dw->spelled(p.type) + (p.name.empty() ? "" : " " + p.name));
  return out;
}

} // namespace ubtrace::cli
