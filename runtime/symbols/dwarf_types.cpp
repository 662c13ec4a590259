#include "runtime/symbols/dwarf_types.h"

#include "runtime/symbols/debug_file.h"
#include "runtime/symbols/demangle.h"
#include "runtime/symbols/dwarf_package.h"
#include "runtime/symbols/elf_file.h"

#include <algorithm>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <map>
#include <unistd.h>

namespace ubtrace::runtime::symbols {

namespace {

const char *attr_string(Dwarf_Die *die, int name) {
  Dwarf_Attribute attr;
  if (!dwarf_attr_integrate(die, name, &attr))
    return nullptr;
  return dwarf_formstring(&attr);
}

bool attr_udata(Dwarf_Die *die, int name, Dwarf_Word &out) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, name, &attr) &&
         dwarf_formudata(&attr, &out) == 0;
}

bool has_flag(Dwarf_Die *die, int name) {
  Dwarf_Attribute attr;
  bool flag = false;
  return dwarf_attr_integrate(die, name, &attr) &&
         dwarf_formflag(&attr, &flag) == 0 && flag;
}

bool type_of(Dwarf_Die *die, Dwarf_Die &out) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_type, &attr) &&
         dwarf_formref_die(&attr, &out) != nullptr;
}

// Whether `path` is `file`, or ends with "/" + `file`.
bool path_ends_with(std::string_view path, std::string_view file) {
  while (file.starts_with("./"))
    file.remove_prefix(2);
  if (path == file)
    return true;
  return path.size() > file.size() && path.ends_with(file) &&
         path[path.size() - file.size() - 1] == '/';
}

// Where a function starts: its entry pc, or its first range (clang's split
// DWARF gives most functions ranges); none where a package unit's
// addresses cannot be resolved.
std::optional<uint64_t> entry_of(Dwarf_Die die) {
  Dwarf_Addr pc = 0, base = 0, end = 0;
  if (dwarf_entrypc(&die, &pc) == 0 ||
      dwarf_ranges(&die, 0, &base, &pc, &end) > 0)
    return pc;
  return std::nullopt;
}

bool has_debug_info(const std::string &path) {
  auto elf = ElfFile::open(path);
  if (!elf)
    return false;
  const Section *s = elf->section(".debug_info");
  return s && s->size > 0 && s->type != 8 /* SHT_NOBITS */;
}

} // namespace

struct DwarfTypes::Impl {
  int fd = -1;
  Dwarf *dwarf = nullptr;
  std::string source;
  struct Unit {
    Dwarf_Die cu;   // the unit holding the line table (the skeleton)
    Dwarf_Die main; // the unit holding the DIEs (the split unit if any)
  };
  std::vector<Unit> units;
  std::vector<Dwarf_Die> functions;                         // definitions
  std::multimap<std::string, size_t, std::less<>> by_name;  // -> functions
  std::multimap<std::string, Dwarf_Die, std::less<>> named; // types
  // Functions by entry address, built on first use (functions_at).
  mutable std::multimap<uint64_t, size_t> by_entry;
  mutable bool entries_indexed = false;
  // The type graph, filled as types are asked for.
  mutable std::vector<DwarfType> nodes;
  mutable std::map<std::pair<Dwarf *, Dwarf_Off>, int> node_of;

  // Units of a DWARF package (BINARY.dwp) for skeletons whose .dwo libdw
  // did not find, each cut out into a .dwo of its own (dwarf_package.h).
  // Their addresses (DW_FORM_addrx into the binary's .debug_addr) are not
  // resolvable that way, which the type and argument lookups do not need.
  struct Package {
    int fd = -1;
    Dwarf *dwarf = nullptr;
  };
  std::vector<Package> packaged;

  ~Impl() {
    for (auto &p : packaged) {
      if (p.dwarf)
        dwarf_end(p.dwarf);
      if (p.fd >= 0)
        ::close(p.fd);
    }
    if (dwarf)
      dwarf_end(dwarf);
    if (fd >= 0)
      ::close(fd);
  }

  // The split unit `id` of BINARY.dwp, if there is one.
  bool package_unit(const std::string &binary, uint64_t id, Dwarf_Die &out) {
    int ufd = extract_package_unit(binary + ".dwp", id);
    if (ufd < 0)
      return false;
    Dwarf *d = dwarf_begin(ufd, DWARF_C_READ);
    if (!d) {
      ::close(ufd);
      return false;
    }
    packaged.push_back({ufd, d});
    Dwarf_CU *cu = nullptr;
    uint8_t unit_type = 0;
    while (dwarf_get_units(d, cu, &cu, nullptr, &unit_type, &out, nullptr) == 0)
      if (unit_type == DW_UT_split_compile)
        return true;
    return false;
  }

  void index_die(Dwarf_Die *parent) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0)
      return;
    do {
      int tag = dwarf_tag(&child);
      switch (tag) {
      case DW_TAG_subprogram: {
        // Defined here: it has code (an address, or ranges: clang's split
        // DWARF 5 gives most functions DW_AT_ranges).
        bool defined = dwarf_hasattr(&child, DW_AT_low_pc) ||
                       dwarf_hasattr(&child, DW_AT_ranges) ||
                       dwarf_hasattr(&child, DW_AT_entry_pc);
        // (The declaration flag of the DIE itself: a definition of a
        // member function points at its declaration, which has one.)
        Dwarf_Attribute decl;
        bool flag = false;
        if ((dwarf_attr(&child, DW_AT_declaration, &decl) &&
             dwarf_formflag(&decl, &flag) == 0 && flag) ||
            !defined)
          break;
        size_t index = functions.size();
        functions.push_back(child);
        if (const char *n = attr_string(&child, DW_AT_name))
          by_name.emplace(n, index);
        for (int a : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
          if (const char *l = attr_string(&child, a)) {
            by_name.emplace(l, index);
            // C++: "ns::f(int)" as listings print it, and "ns::f".
            std::string full = demangle_or_self(l);
            if (full != l) {
              by_name.emplace(full, index);
              std::string bare = strip_parameters(full);
              if (bare != full)
                by_name.emplace(bare, index);
            }
            break;
          }
        break;
      }
      case DW_TAG_namespace:
        index_die(&child);
        break;
      case DW_TAG_structure_type:
      case DW_TAG_class_type:
      case DW_TAG_union_type:
      case DW_TAG_enumeration_type:
      case DW_TAG_typedef:
      case DW_TAG_base_type: {
        const char *n = dwarf_diename(&child);
        if (n) {
          const char *prefix =
              tag == DW_TAG_union_type                           ? "union "
              : tag == DW_TAG_enumeration_type                   ? "enum "
              : tag == DW_TAG_typedef || tag == DW_TAG_base_type ? ""
                                                                 : "struct ";
          named.emplace(std::string(prefix) + n, child);
        }
        if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type)
          index_die(&child); // nested types
        break;
      }
      default:
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  void index_units(const std::string &binary) {
    Dwarf_CU *cu = nullptr;
    Dwarf_Die cudie, subdie;
    uint8_t unit_type = 0;
    while (dwarf_get_units(dwarf, cu, &cu, nullptr, &unit_type, &cudie,
                           &subdie) == 0) {
      if (unit_type == DW_UT_skeleton) {
        // The split unit's DIEs, when libdw found its .dwo; else the
        // package's unit with the same id.
        if (dwarf_tag(&subdie) == DW_TAG_compile_unit) {
          units.push_back({cudie, subdie});
          index_die(&subdie);
          continue;
        }
        Dwarf_Half version = 0;
        uint64_t id = 0;
        Dwarf_Die unit;
        if (dwarf_cu_info(cu, &version, nullptr, nullptr, nullptr, &id, nullptr,
                          nullptr) != 0 ||
            !package_unit(binary, id, unit))
          continue;
        units.push_back({cudie, unit});
        index_die(&unit);
      } else if (unit_type == DW_UT_compile || unit_type == DW_UT_partial) {
        units.push_back({cudie, cudie});
        index_die(&cudie);
      }
    }
  }

  int add(DwarfType t) {
    nodes.push_back(std::move(t));
    return static_cast<int>(nodes.size() - 1);
  }

  // Members of a struct/union/class, bases and anonymous members flattened.
  void members_of(Dwarf_Die *die, uint64_t base, int into) const {
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
      return;
    do {
      int tag = dwarf_tag(&child);
      if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
        continue;
      if (has_flag(&child, DW_AT_external)) // a static member
        continue;
      Dwarf_Word offset = 0;
      attr_udata(&child, DW_AT_data_member_location, offset);
      Dwarf_Word bit_size = 0, data_bit_offset = 0, byte_size = 0;
      bool bitfield = attr_udata(&child, DW_AT_bit_size, bit_size);
      Dwarf_Die type;
      if (!type_of(&child, type))
        continue;
      if (bitfield) {
        if (attr_udata(&child, DW_AT_data_bit_offset, data_bit_offset)) {
          offset = data_bit_offset / 8;
          data_bit_offset %= 8;
        } else {
          // DWARF 2/3: bit_offset counts from the storage unit's top.
          Dwarf_Word old_offset = 0;
          attr_udata(&child, DW_AT_bit_offset, old_offset);
          if (!attr_udata(&child, DW_AT_byte_size, byte_size))
            byte_size = static_cast<Dwarf_Word>(dwarf_bytesize(&type));
          uint64_t from_low = byte_size * 8 - old_offset - bit_size;
          offset += from_low / 8;
          data_bit_offset = from_low % 8;
        }
      }
      const char *name = dwarf_diename(&child);
      int member_type = node(&type);
      DwarfType::Kind k = nodes[resolve(member_type)].kind;
      bool anonymous_record = !name && (k == DwarfType::Kind::Struct ||
                                        k == DwarfType::Kind::Union);
      if (tag == DW_TAG_inheritance || anonymous_record) {
        Dwarf_Die record = type;
        // Through typedefs and qualifiers to the record itself.
        while (dwarf_tag(&record) != DW_TAG_structure_type &&
               dwarf_tag(&record) != DW_TAG_class_type &&
               dwarf_tag(&record) != DW_TAG_union_type &&
               type_of(&record, record))
          ;
        members_of(&record, base + offset, into);
        continue;
      }
      DwarfType::Member m;
      m.name = name ? name : "";
      m.type = member_type;
      m.offset = base + offset;
      m.bit_size = static_cast<uint32_t>(bit_size);
      m.bit_offset = static_cast<uint32_t>(data_bit_offset);
      auto &members = nodes[into].members;
      bool shadowed = false;
      for (const auto &existing : members)
        shadowed |= !m.name.empty() && existing.name == m.name;
      if (!shadowed)
        members.push_back(std::move(m));
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  int resolve(int index) const {
    for (int guard = 0; index >= 0 && guard < 64; ++guard) {
      auto k = nodes[index].kind;
      if (k != DwarfType::Kind::Typedef && k != DwarfType::Kind::Const)
        break;
      index = nodes[index].elem;
    }
    return index;
  }

  int elem_of(Dwarf_Die *die) const {
    Dwarf_Die t;
    return type_of(die, t) ? node(&t) : -1;
  }

  // The node for a type DIE (created on first use).
  int node(Dwarf_Die *die) const {
    auto key = std::make_pair(dwarf_cu_getdwarf(die->cu), dwarf_dieoffset(die));
    if (auto it = node_of.find(key); it != node_of.end())
      return it->second;
    auto *self = const_cast<Impl *>(this);
    int index = self->add({});
    node_of[key] = index;
    DwarfType t;
    const char *name = dwarf_diename(die);
    int size = dwarf_bytesize(die);
    t.size = size > 0 ? static_cast<uint64_t>(size) : 0;
    switch (dwarf_tag(die)) {
    case DW_TAG_base_type: {
      Dwarf_Word enc = 0;
      attr_udata(die, DW_AT_encoding, enc);
      t.name = name ? name : "";
      if (enc == DW_ATE_boolean)
        t.kind = DwarfType::Kind::Bool;
      else if (enc == DW_ATE_float || enc == DW_ATE_complex_float)
        t.kind = DwarfType::Kind::Float;
      else {
        t.kind = DwarfType::Kind::Int;
        t.is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
      }
      break;
    }
    case DW_TAG_unspecified_type: // decltype(nullptr)
      t.kind = DwarfType::Kind::Pointer;
      t.name = name ? name : "";
      t.size = 8;
      break;
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_ptr_to_member_type:
      t.kind = DwarfType::Kind::Pointer;
      t.size = t.size ? t.size : 8;
      t.reference = dwarf_tag(die) == DW_TAG_reference_type ||
                    dwarf_tag(die) == DW_TAG_rvalue_reference_type;
      nodes[index] = t;
      t.elem = elem_of(die);
      break;
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
      t.kind = DwarfType::Kind::Const;
      t.name = dwarf_tag(die) == DW_TAG_const_type      ? "const"
               : dwarf_tag(die) == DW_TAG_volatile_type ? "volatile"
                                                        : "";
      nodes[index] = t;
      t.elem = elem_of(die);
      break;
    case DW_TAG_typedef:
      t.kind = DwarfType::Kind::Typedef;
      t.name = name ? name : "";
      nodes[index] = t;
      t.elem = elem_of(die);
      break;
    case DW_TAG_array_type: {
      t.kind = DwarfType::Kind::Array;
      nodes[index] = t;
      int elem = elem_of(die);
      // int a[2][3]: one subrange per dimension, the outermost first; the
      // inner ones become arrays of arrays.
      std::vector<uint64_t> counts;
      Dwarf_Die sub;
      if (dwarf_child(die, &sub) == 0)
        do {
          if (dwarf_tag(&sub) != DW_TAG_subrange_type)
            continue;
          Dwarf_Word count = 0, upper = 0;
          Dwarf_Attribute attr;
          if (attr_udata(&sub, DW_AT_count, count))
            counts.push_back(count);
          else if (dwarf_attr(&sub, DW_AT_upper_bound, &attr) &&
                   dwarf_formudata(&attr, &upper) == 0 &&
                   upper != static_cast<Dwarf_Word>(-1))
            counts.push_back(upper + 1);
          else
            counts.push_back(0);
        } while (dwarf_siblingof(&sub, &sub) == 0);
      if (counts.empty())
        counts.push_back(0);
      for (size_t i = counts.size(); i-- > 1;) {
        DwarfType inner;
        inner.kind = DwarfType::Kind::Array;
        inner.elem = elem;
        inner.count = counts[i];
        inner.size = elem >= 0 ? nodes[resolve(elem)].size * counts[i] : 0;
        elem = self->add(inner);
      }
      t.elem = elem;
      t.count = counts[0];
      t.size = elem >= 0 ? nodes[resolve(elem)].size * counts[0] : 0;
      break;
    }
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
      bool is_union = dwarf_tag(die) == DW_TAG_union_type;
      t.kind = is_union ? DwarfType::Kind::Union : DwarfType::Kind::Struct;
      t.name = std::string(is_union ? "union " : "struct ") +
               (name ? name : "(anonymous)");
      t.declaration = has_flag(die, DW_AT_declaration);
      nodes[index] = t;
      members_of(die, 0, index);
      t.members = std::move(nodes[index].members);
      break;
    }
    case DW_TAG_enumeration_type: {
      t.kind = DwarfType::Kind::Enum;
      t.name = std::string("enum ") + (name ? name : "(anonymous)");
      int under = elem_of(die);
      t.is_signed = under >= 0 ? nodes[resolve(under)].is_signed : true;
      Dwarf_Die e;
      if (dwarf_child(die, &e) == 0)
        do {
          if (dwarf_tag(&e) != DW_TAG_enumerator)
            continue;
          Dwarf_Attribute attr;
          Dwarf_Sword value = 0;
          if (dwarf_attr(&e, DW_AT_const_value, &attr))
            dwarf_formsdata(&attr, &value);
          const char *en = dwarf_diename(&e);
          t.enumerators.emplace_back(en ? en : "", value);
        } while (dwarf_siblingof(&e, &e) == 0);
      break;
    }
    case DW_TAG_subroutine_type:
      t.kind = DwarfType::Kind::Function;
      break;
    default:
      t.kind = DwarfType::Kind::Void;
      break;
    }
    nodes[index] = std::move(t);
    return index;
  }

  DwarfFunction function(size_t i) const {
    Dwarf_Die die = functions[i];
    DwarfFunction f;
    if (const char *n = attr_string(&die, DW_AT_name))
      f.name = n;
    for (int a : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
      if (const char *l = attr_string(&die, a)) {
        f.linkage = l;
        break;
      }
    f.entry = entry_of(die).value_or(0);
    f.ret = elem_of(&die);
    Dwarf_Die child;
    if (dwarf_child(&die, &child) == 0)
      do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_unspecified_parameters)
          f.variadic = true;
        if (tag != DW_TAG_formal_parameter)
          continue;
        DwarfFunction::Param p;
        if (const char *n = attr_string(&child, DW_AT_name))
          p.name = n;
        p.type = elem_of(&child);
        locate(child, f.entry, p);
        f.params.push_back(std::move(p));
      } while (dwarf_siblingof(&child, &child) == 0);
    Dwarf_Attribute cc;
    Dwarf_Word convention = 0;
    f.nocall = (dwarf_attr_integrate(&die, DW_AT_calling_convention, &cc) &&
                dwarf_formudata(&cc, &convention) == 0 &&
                convention == DW_CC_nocall) ||
               reshaped(die);
    return f;
  }

  // A concrete instance whose parameters are not its abstract origin's, in
  // order: a GCC clone (f.constprop.0, f.isra.0) that dropped or reordered
  // them, without saying DW_CC_nocall.
  static bool reshaped(Dwarf_Die &die) {
    Dwarf_Attribute attr;
    Dwarf_Die origin;
    if (!dwarf_attr(&die, DW_AT_abstract_origin, &attr) ||
        !dwarf_formref_die(&attr, &origin))
      return false;
    auto params = [](Dwarf_Die &of, bool follow) {
      std::vector<Dwarf_Off> out;
      Dwarf_Die c;
      if (dwarf_child(&of, &c) == 0)
        do {
          if (dwarf_tag(&c) != DW_TAG_formal_parameter)
            continue;
          Dwarf_Attribute a;
          Dwarf_Die o;
          if (!follow)
            out.push_back(dwarf_dieoffset(&c));
          else if (dwarf_attr(&c, DW_AT_abstract_origin, &a) &&
                   dwarf_formref_die(&a, &o))
            out.push_back(dwarf_dieoffset(&o));
          else
            out.push_back(0);
        } while (dwarf_siblingof(&c, &c) == 0);
      return out;
    };
    return params(die, true) != params(origin, false);
  }

  // Where a parameter is at `entry` (see DwarfFunction::Param).
  static void locate(Dwarf_Die &param, uint64_t entry,
                     DwarfFunction::Param &p) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&param, DW_AT_const_value, &attr)) {
      Dwarf_Sword v = 0;
      Dwarf_Word u = 0;
      if (dwarf_formsdata(&attr, &v) == 0) {
        p.at = DwarfFunction::Param::At::Constant;
        p.value = v;
      } else if (dwarf_formudata(&attr, &u) == 0) {
        p.at = DwarfFunction::Param::At::Constant;
        p.value = static_cast<int64_t>(u);
      }
      return;
    }
    if (!dwarf_attr(&param, DW_AT_location, &attr)) {
      p.at = DwarfFunction::Param::At::Gone;
      return;
    }
    Dwarf_Op *expr = nullptr;
    size_t len = 0;
    int n = dwarf_getlocation_addr(&attr, entry, &expr, &len, 1);
    if (n == 0) {
      p.at = DwarfFunction::Param::At::Gone;
      return;
    }
    if (n != 1 || len != 1)
      return;
    if (expr[0].atom >= DW_OP_reg0 && expr[0].atom <= DW_OP_reg31) {
      p.at = DwarfFunction::Param::At::Register;
      p.dwarf_reg = expr[0].atom - DW_OP_reg0;
    } else if (expr[0].atom == DW_OP_regx) {
      p.at = DwarfFunction::Param::At::Register;
      p.dwarf_reg = static_cast<int>(expr[0].number);
    }
  }
};

DwarfTypes::DwarfTypes(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwarfTypes::~DwarfTypes() = default;

std::unique_ptr<DwarfTypes> DwarfTypes::open(const std::string &path,
                                             std::string *why) {
  // The binary's own DWARF (a skeleton's included), else its debug file.
  std::string source = path;
  if (!has_debug_info(path)) {
    auto elf = ElfFile::open(path);
    if (!elf) {
      if (why)
        *why = elf.error();
      return nullptr;
    }
    auto debug = find_debug_file(*elf);
    if (!debug) {
      if (why)
        *why = "no DWARF debug info found for '" + path +
               "' (looked in the file, by build id and .gnu_debuglink under "
               "/usr/lib/debug and the --debuginfo directories)";
      return nullptr;
    }
    source = *debug;
  }
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  impl->fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd >= 0)
    impl->dwarf = dwarf_begin(impl->fd, DWARF_C_READ);
  if (!impl->dwarf) {
    if (why)
      *why = "cannot read the DWARF of '" + source + "'";
    return nullptr;
  }
  impl->index_units(source);
  if (impl->units.empty()) {
    if (why)
      *why = "the DWARF of '" + source +
             "' has no compilation units ubtrace can read (split DWARF "
             "whose .dwo files are missing?)";
    return nullptr;
  }
  return std::unique_ptr<DwarfTypes>(new DwarfTypes(std::move(impl)));
}

const std::string &DwarfTypes::source() const {
  return impl_->source;
}

std::vector<DwarfFunction> DwarfTypes::functions(std::string_view name) const {
  std::vector<DwarfFunction> out;
  std::vector<size_t> seen;
  auto [lo, hi] = impl_->by_name.equal_range(name);
  for (auto it = lo; it != hi; ++it) {
    if (std::find(seen.begin(), seen.end(), it->second) != seen.end())
      continue;
    seen.push_back(it->second);
  }
  std::sort(seen.begin(), seen.end());
  for (size_t i : seen)
    out.push_back(impl_->function(i));
  return out;
}

std::vector<DwarfFunction> DwarfTypes::all_functions() const {
  std::vector<DwarfFunction> out;
  for (size_t i = 0; i < impl_->functions.size(); ++i)
    out.push_back(impl_->function(i));
  return out;
}

std::vector<DwarfFunction> DwarfTypes::functions_at(uint64_t entry) const {
  auto &by_entry = impl_->by_entry;
  if (!impl_->entries_indexed) {
    for (size_t i = 0; i < impl_->functions.size(); ++i) {
      if (auto pc = entry_of(impl_->functions[i]))
        by_entry.emplace(*pc, i);
    }
    impl_->entries_indexed = true;
  }
  std::vector<DwarfFunction> out;
  auto [lo, hi] = by_entry.equal_range(entry);
  for (auto it = lo; it != hi; ++it)
    out.push_back(impl_->function(it->second));
  return out;
}

std::optional<int> DwarfTypes::named_type(std::string_view name) const {
  auto [lo, hi] = impl_->named.equal_range(name);
  std::optional<int> declared;
  for (auto it = lo; it != hi; ++it) {
    Dwarf_Die die = it->second;
    if (has_flag(&die, DW_AT_declaration)) {
      declared = declared ? declared : impl_->node(&die);
      continue;
    }
    return impl_->node(&die);
  }
  return declared;
}

const DwarfType &DwarfTypes::type(int index) const {
  return impl_->nodes.at(static_cast<size_t>(index));
}

int DwarfTypes::resolved(int index) const {
  return impl_->resolve(index);
}

std::string DwarfTypes::spelled(int index) const {
  if (index < 0)
    return "void";
  const DwarfType &t = type(index);
  switch (t.kind) {
  case DwarfType::Kind::Pointer:
    if (t.elem < 0 && !t.name.empty())
      return t.name;
    return spelled(t.elem) + (t.reference ? "&" : "*");
  case DwarfType::Kind::Const:
    if (t.name.empty())
      return spelled(t.elem);
    return t.name + " " + spelled(t.elem);
  case DwarfType::Kind::Array:
    return spelled(t.elem) + "[" + (t.count ? std::to_string(t.count) : "") +
           "]";
  case DwarfType::Kind::Function:
    return "void (*)()";
  case DwarfType::Kind::Void:
    return t.name.empty() ? "void" : t.name;
  default:
    return t.name;
  }
}

std::vector<uint64_t> DwarfTypes::line_addresses(std::string_view file,
                                                 uint32_t line,
                                                 uint32_t column) const {
  std::vector<uint64_t> out;
  for (auto &unit : impl_->units) {
    Dwarf_Die cu = unit.cu;
    Dwarf_Die main = unit.main;
    // The unit's own source file: statements from headers do not count.
    const char *cu_name = dwarf_diename(&main);
    if (!cu_name)
      cu_name = dwarf_diename(&cu);
    if (!cu_name)
      continue;
    Dwarf_Lines *lines = nullptr;
    size_t count = 0;
    if (dwarf_getsrclines(&cu, &lines, &count) != 0)
      continue;
    bool matched_unit = false;
    for (size_t i = 0; i < count; ++i) {
      Dwarf_Line *l = dwarf_onesrcline(lines, i);
      int lineno = 0, col = 0;
      bool stmt = false, end = false;
      if (!l || dwarf_lineno(l, &lineno) != 0 || dwarf_linecol(l, &col) != 0)
        continue;
      dwarf_linebeginstatement(l, &stmt);
      dwarf_lineendsequence(l, &end);
      if (end || !stmt || static_cast<uint32_t>(lineno) != line ||
          (column && static_cast<uint32_t>(col) != column))
        continue;
      const char *src = dwarf_linesrc(l, nullptr, nullptr);
      if (!src || !path_ends_with(src, file))
        continue;
      std::string_view s(src), n(cu_name);
      if (!(s == n || s.ends_with(n) || path_ends_with(src, n)))
        continue;
      Dwarf_Addr addr = 0;
      if (dwarf_lineaddr(l, &addr) == 0 && !matched_unit) {
        out.push_back(addr);
        matched_unit = true; // the first statement of the line, per unit
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace ubtrace::runtime::symbols
