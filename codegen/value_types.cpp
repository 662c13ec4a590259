#include "codegen/value_types.h"

namespace ubtrace::codegen {

using K = runtime::ValueType::Kind;

runtime::ValueType to_value_type(const ast::Type &t, const EnumNames *enums) {
  runtime::ValueType v;
  v.size = t.size;
  auto fields = [&](K kind) {
    v.kind = kind;
    for (const auto &f : t.fields) {
      runtime::ValueType::Field out;
      out.name = f.name;
      out.offset = f.offset;
      out.type = to_value_type(*f.type, enums);
      out.bitfield_bits = f.bitfield_bits;
      out.bitfield_shift = f.bitfield_shift;
      v.fields.push_back(std::move(out));
    }
  };
  switch (t.kind) {
  case ast::TypeKind::None:
  case ast::TypeKind::Void:
  case ast::TypeKind::StackMode:
  case ast::TypeKind::TimestampMode:
  case ast::TypeKind::Float: // no floating point values: printed null
    v.kind = K::None;
    break;
  case ast::TypeKind::Integer:
    v.kind = t.is_enum() ? K::Enum : K::Integer;
    v.is_signed = t.is_signed;
    v.type_name = t.name;
    if (t.is_enum() && enums)
      if (auto it = enums->find(t.name); it != enums->end())
        v.enum_names = it->second;
    break;
  case ast::TypeKind::Boolean:
    v.kind = K::Boolean;
    break;
  case ast::TypeKind::Pointer:
    v.kind = K::Pointer;
    break;
  case ast::TypeKind::CStruct:
    fields(K::Struct);
    v.type_name = t.name;
    break;
  case ast::TypeKind::String:
    v.kind = K::String;
    v.c_chars = t.c_chars;
    break;
  case ast::TypeKind::Buffer:
    v.kind = K::Buffer;
    break;
  case ast::TypeKind::Array: {
    v.kind = K::Array;
    v.count = t.count;
    runtime::ValueType::Field elem;
    elem.type = to_value_type(*t.elem, enums);
    v.fields.push_back(std::move(elem));
    break;
  }
  case ast::TypeKind::Tuple:
    fields(K::Tuple);
    break;
  case ast::TypeKind::Record:
    fields(K::Record);
    break;
  case ast::TypeKind::UStack:
  case ast::TypeKind::KStack:
    v.kind = t.kind == ast::TypeKind::UStack ? K::UStack : K::KStack;
    v.stack_limit = t.stack_limit;
    v.stack_mode = t.stack_mode;
    break;
  case ast::TypeKind::USym:
    v.kind = K::USym;
    break;
  case ast::TypeKind::KSym:
    v.kind = K::KSym;
    break;
  case ast::TypeKind::Inet:
    v.kind = K::Inet;
    break;
  case ast::TypeKind::MacAddr:
    v.kind = K::MacAddr;
    break;
  case ast::TypeKind::Timestamp:
    v.kind = K::Timestamp;
    break;
  case ast::TypeKind::CgroupPath:
    v.kind = K::CgroupPath;
    break;
  case ast::TypeKind::StrError:
    v.kind = K::StrError;
    break;
  case ast::TypeKind::SignalName:
    v.kind = K::SignalName;
    break;
  case ast::TypeKind::SyscallName:
    v.kind = K::SyscallName;
    break;
  case ast::TypeKind::Username:
    v.kind = K::Username;
    break;
  case ast::TypeKind::ProbeName:
    v.kind = K::Probe;
    break;
  case ast::TypeKind::Count:
  case ast::TypeKind::Sum:
  case ast::TypeKind::Min:
  case ast::TypeKind::Max:
  case ast::TypeKind::Avg:
    v.kind = K::Integer;
    v.size = 8;
    v.is_signed = t.kind != ast::TypeKind::Count && t.agg_signed;
    break;
  case ast::TypeKind::Stats:
  case ast::TypeKind::Hist:
  case ast::TypeKind::LHist:
  case ast::TypeKind::TSeries:
    v.kind = K::Integer;
    v.size = 8;
    v.is_signed = t.agg_signed;
    break;
  }
  return v;
}

} // namespace ubtrace::codegen
