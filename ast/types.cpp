#include "ast/types.h"

#include <algorithm>
#include <cassert>

namespace ubtrace::ast {

const Field *Type::field(const std::string &n) const {
  for (const auto &f : fields)
    if (f.name == n)
      return &f;
  return nullptr;
}

Type make_int(uint32_t bytes, bool is_signed) {
  Type t;
  t.kind = TypeKind::Integer;
  t.size = bytes;
  t.is_signed = is_signed;
  return t;
}

Type widen_int(const Type &t) {
  Type w = make_int(8, t.is_signed);
  w.name = t.name;                   // an enum stays one
  w.sign_flexible = t.sign_flexible; // @v = 5; @v = (uint64)7 is uint64
  return w;
}

Type literal_type(uint64_t magnitude, bool negative) {
  if (!negative && magnitude > static_cast<uint64_t>(INT64_MAX))
    return make_int(8, false);
  // The largest magnitude each width holds: one more on the negative side.
  const uint64_t extra = negative ? 1 : 0;
  uint32_t bytes = 8;
  for (uint32_t b : {1u, 2u, 4u})
    if (magnitude <= (uint64_t(1) << (8 * b - 1)) - 1 + extra) {
      bytes = b;
      break;
    }
  Type t = make_int(bytes, true);
  t.sign_flexible = !negative;
  return t;
}

Type make_bool() {
  return make_simple(TypeKind::Boolean, 1);
}
Type make_void() {
  return make_simple(TypeKind::Void, 0);
}

Type make_string(uint32_t size) {
  return make_simple(TypeKind::String, size);
}

// Stored as a u32 length and then the data.
Type make_buffer(uint32_t size) {
  return make_simple(TypeKind::Buffer, size + 4);
}

Type make_pointer(Type pointee, AddrSpace as) {
  Type t = make_simple(TypeKind::Pointer, 8);
  t.elem = std::make_shared<const Type>(std::move(pointee));
  t.as = as;
  return t;
}

Type make_array(Type elem, uint32_t count) {
  Type t = make_simple(TypeKind::Array, elem.size * count);
  t.count = count;
  t.elem = std::make_shared<const Type>(std::move(elem));
  return t;
}

Type make_simple(TypeKind k, uint32_t size) {
  Type t;
  t.kind = k;
  t.size = size;
  return t;
}

uint32_t type_alignment(const Type &t) {
  switch (t.kind) {
  case TypeKind::Integer:
  case TypeKind::Pointer:
  case TypeKind::Float:
    return std::max<uint32_t>(1, t.size);
  case TypeKind::Array:
    return t.elem ? type_alignment(*t.elem) : 1;
  case TypeKind::CStruct:
  case TypeKind::Tuple:
  case TypeKind::Record: {
    if (t.align)
      return t.align;
    uint32_t a = 1;
    for (const auto &f : t.fields)
      a = std::max(a, type_alignment(*f.type));
    return a;
  }
  case TypeKind::Boolean:
  case TypeKind::String:
  case TypeKind::Buffer:
  case TypeKind::MacAddr:
    return 1;
  case TypeKind::None:
  case TypeKind::Void:
  case TypeKind::UStack:
  case TypeKind::KStack:
  case TypeKind::USym:
  case TypeKind::KSym:
  case TypeKind::Inet:
  case TypeKind::Timestamp:
  case TypeKind::CgroupPath:
  case TypeKind::StrError:
  case TypeKind::SignalName:
  case TypeKind::SyscallName:
  case TypeKind::Username:
  case TypeKind::ProbeName:
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
  case TypeKind::Hist:
  case TypeKind::LHist:
  case TypeKind::TSeries:
  case TypeKind::StackMode:
  case TypeKind::TimestampMode:
    return 8;
  }
  return 8;
}

static Type layout(TypeKind kind, std::vector<std::string> names,
                   std::vector<Type> elems) {
  Type t = make_simple(kind, 0);
  uint32_t offset = 0, align = 1;
  for (size_t i = 0; i < elems.size(); i++) {
    uint32_t a = type_alignment(elems[i]);
    align = std::max(align, a);
    offset = (offset + a - 1) / a * a;
    Field f;
    f.name = i < names.size() ? names[i] : std::string();
    f.offset = offset;
    offset += elems[i].size;
    f.type = std::make_shared<const Type>(std::move(elems[i]));
    t.fields.push_back(std::move(f));
  }
  t.size = (offset + align - 1) / align * align;
  return t;
}

Type make_tuple(std::vector<Type> elems) {
  return layout(TypeKind::Tuple, {}, std::move(elems));
}

Type make_record(std::vector<std::string> names, std::vector<Type> elems) {
  return layout(TypeKind::Record, std::move(names), std::move(elems));
}

bool same_type(const Type &a, const Type &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case TypeKind::Integer:
    return a.size == b.size && a.is_signed == b.is_signed;
  case TypeKind::String:
    return true;
  case TypeKind::Pointer:
    return same_type(*a.elem, *b.elem);
  case TypeKind::Array:
    return a.count == b.count && same_type(*a.elem, *b.elem);
  case TypeKind::Tuple:
  case TypeKind::Record:
    if (a.fields.size() != b.fields.size())
      return false;
    for (size_t i = 0; i < a.fields.size(); i++)
      if (a.fields[i].name != b.fields[i].name ||
          !same_type(*a.fields[i].type, *b.fields[i].type))
        return false;
    return true;
  case TypeKind::CStruct:
    return a.name == b.name;
  case TypeKind::Buffer:
  case TypeKind::Inet:
  case TypeKind::Float:
    return a.size == b.size;
  case TypeKind::UStack:
  case TypeKind::KStack:
    return a.stack_limit == b.stack_limit && a.stack_mode == b.stack_mode;
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
    return a.agg_signed == b.agg_signed;
  case TypeKind::Hist:
    return a.hist_bits == b.hist_bits;
  case TypeKind::LHist:
    return a.lhist_min == b.lhist_min && a.lhist_max == b.lhist_max &&
           a.lhist_step == b.lhist_step;
  case TypeKind::TSeries:
    return a.ts_interval_ns == b.ts_interval_ns &&
           a.ts_intervals == b.ts_intervals && a.ts_agg == b.ts_agg &&
           a.agg_signed == b.agg_signed;
  case TypeKind::None:
  case TypeKind::Void:
  case TypeKind::Boolean:
  case TypeKind::USym:
  case TypeKind::KSym:
  case TypeKind::MacAddr:
  case TypeKind::Timestamp:
  case TypeKind::CgroupPath:
  case TypeKind::StrError:
  case TypeKind::SignalName:
  case TypeKind::SyscallName:
  case TypeKind::Username:
  case TypeKind::ProbeName:
  case TypeKind::Count:
  case TypeKind::StackMode:
  case TypeKind::TimestampMode:
    return true;
  }
  return true;
}

std::string type_str(const Type &t) {
  switch (t.kind) {
  case TypeKind::None:
    return "none";
  case TypeKind::Void:
    return "void";
  case TypeKind::Integer:
    if (t.is_enum())
      return "enum " + t.name;
    return (t.is_signed ? "int" : "uint") + std::to_string(8 * t.size);
  case TypeKind::Boolean:
    return "bool";
  case TypeKind::Pointer:
    return type_str(*t.elem) + " *";
  case TypeKind::CStruct:
    return t.name;
  case TypeKind::String:
    return t.size ? "string[" + std::to_string(t.size) + "]" : "string";
  case TypeKind::Buffer:
    return "buffer[" + std::to_string(t.size - 4) + "]";
  case TypeKind::Inet:
    return "inet[" + std::to_string(t.size) + "]";
  case TypeKind::Array:
    return type_str(*t.elem) + "[" + std::to_string(t.count) + "]";
  case TypeKind::Tuple: {
    std::string s = "(";
    for (size_t i = 0; i < t.fields.size(); i++)
      s += (i ? "," : "") + type_str(*t.fields[i].type);
    return s + ")";
  }
  case TypeKind::Record: {
    std::string s = "record { ";
    for (size_t i = 0; i < t.fields.size(); i++)
      s += (i ? ", ." : ".") + t.fields[i].name + " = " +
           type_str(*t.fields[i].type);
    return s + " }";
  }
  case TypeKind::UStack:
    return "ustack";
  case TypeKind::KStack:
    return "kstack";
  case TypeKind::USym:
    return "usym_t";
  case TypeKind::KSym:
    return "ksym_t";
  case TypeKind::MacAddr:
    return "mac_address";
  case TypeKind::Timestamp:
    return "timestamp";
  case TypeKind::CgroupPath:
    return "cgroup_path_t";
  case TypeKind::StrError:
    return "strerror_t";
  case TypeKind::Float:
    return t.size == 4 ? "float" : "double";
  case TypeKind::SignalName:
    return "signal_name_t";
  case TypeKind::SyscallName:
    return "syscall_name_t";
  case TypeKind::Username:
    return "username";
  case TypeKind::ProbeName:
    return "probe";
  case TypeKind::Count:
    return "count_t";
  case TypeKind::Sum:
    return t.agg_signed ? "sum_t" : "usum_t";
  case TypeKind::Min:
    return t.agg_signed ? "min_t" : "umin_t";
  case TypeKind::Max:
    return t.agg_signed ? "max_t" : "umax_t";
  case TypeKind::Avg:
    return t.agg_signed ? "avg_t" : "uavg_t";
  case TypeKind::Stats:
    return t.agg_signed ? "stats_t" : "ustats_t";
  case TypeKind::Hist:
    return "hist_t";
  case TypeKind::LHist:
    return "lhist_t";
  case TypeKind::TSeries:
    return "tseries_t";
  case TypeKind::StackMode:
    return "stack_mode";
  case TypeKind::TimestampMode:
    return "timestamp_mode";
  }
  return "none";
}

Type common_type(const Type &a, const Type &b) {
  if (a.kind != b.kind) {
    // Booleans mix with integers as integers.
    if (a.is_intlike() && b.is_intlike())
      return common_type(a.is_int() ? a : make_int(1, false),
                         b.is_int() ? b : make_int(1, false));
    return Type{};
  }
  switch (a.kind) {
  case TypeKind::Integer: {
    if (a.is_signed == b.is_signed) {
      Type t = make_int(std::max(a.size, b.size), a.is_signed);
      if (a.name == b.name)
        t.name = a.name; // the same enum on both sides stays that enum
      t.sign_flexible = a.sign_flexible && b.sign_flexible;
      return t;
    }
    // A literal's sign gives way to the other side's.
    if (a.sign_flexible != b.sign_flexible)
      return make_int(std::max(a.size, b.size),
                      a.sign_flexible ? b.is_signed : a.is_signed);
    // Mixed signs: the signed type must be wider to hold both.
    const Type &s = a.is_signed ? a : b;
    const Type &u = a.is_signed ? b : a;
    if (s.size > u.size)
      return make_int(s.size, true);
    return make_int(std::min<uint32_t>(8, u.size * 2), true);
  }
  case TypeKind::String:
    return make_string(std::max(a.size, b.size));
  case TypeKind::Tuple:
  case TypeKind::Record: {
    if (a.fields.size() != b.fields.size())
      return Type{};
    std::vector<Type> elems;
    std::vector<std::string> names;
    for (size_t i = 0; i < a.fields.size(); i++) {
      // A record's fields pair by name (in the first one's order): (a=1,
      // b=2) and (b=3, a=4) are one type; a tuple's by position.
      const Field *bf =
          a.kind == TypeKind::Record ? b.field(a.fields[i].name) : &b.fields[i];
      if (!bf ||
          (a.kind == TypeKind::Tuple && a.fields[i].name != b.fields[i].name))
        return Type{};
      Type c = common_type(*a.fields[i].type, *bf->type);
      if (c.is_none())
        return Type{};
      elems.push_back(c);
      names.push_back(a.fields[i].name);
    }
    return a.kind == TypeKind::Tuple ? make_tuple(elems)
                                     : make_record(names, elems);
  }
  case TypeKind::Buffer:
  case TypeKind::Inet:
    return a.size >= b.size ? a : b;
  case TypeKind::Float:
    return a.size == b.size ? a : Type{};
  case TypeKind::None:
  case TypeKind::Void:
  case TypeKind::Boolean:
  case TypeKind::Pointer:
  case TypeKind::CStruct:
  case TypeKind::Array:
  case TypeKind::UStack:
  case TypeKind::KStack:
  case TypeKind::USym:
  case TypeKind::KSym:
  case TypeKind::MacAddr:
  case TypeKind::Timestamp:
  case TypeKind::CgroupPath:
  case TypeKind::StrError:
  case TypeKind::SignalName:
  case TypeKind::SyscallName:
  case TypeKind::Username:
  case TypeKind::ProbeName:
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
  case TypeKind::Hist:
  case TypeKind::LHist:
  case TypeKind::TSeries:
  case TypeKind::StackMode:
  case TypeKind::TimestampMode:
    return same_type(a, b) ? a : Type{};
  }
  return Type{};
}

} // namespace ubtrace::ast
