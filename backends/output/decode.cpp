#include "backends/output/decode.h"

#include "backends/output/errno_text.h"
#include "backends/output/symbols_text.h"
#include "backends/output/time_format.h"
#include "runtime/syscalls/syscall_names.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sys/socket.h>
#include <type_traits>

namespace ubtrace::output {
namespace {

using Kind = runtime::ValueType::Kind;

// Divides in the type's own width; a quotient that overflows (INT_MIN / -1)
// keeps the dividend rather than trapping.
template <class T> T divide(T v, T d) {
  if (d == 0)
    return v;
  if constexpr (std::is_signed_v<T>)
    if (d == -1 && v == std::numeric_limits<T>::min())
      return v;
  return v / d;
}

std::string string_text(Bytes bytes, uint32_t size, const FormatContext &ctx,
                        bool c_chars) {
  Bytes b = slice(bytes, 0, size);
  const auto *p = reinterpret_cast<const char *>(b.data());
  size_t len = strnlen(p, b.size());
  std::string s(p, len);
  // A string filling its whole buffer was most likely cut short (not a C
  // char[N], whose N bytes may all be text).
  if (len == size && !c_chars)
    s += ctx.str_trunc_trailer;
  return s;
}

std::string inet_text(Bytes bytes) {
  uint64_t af = load_u64(bytes, 0);
  unsigned char addr[16] = {};
  Bytes raw = slice(bytes, 8, 16);
  std::memcpy(addr, raw.data(), raw.size());
  char text[INET6_ADDRSTRLEN] = {};
  if (af == AF_INET)
    inet_ntop(AF_INET, addr, text, sizeof(text));
  else if (af == AF_INET6)
    inet_ntop(AF_INET6, addr, text, sizeof(text));
  return text;
}

std::string mac_text(Bytes bytes) {
  char text[18];
  std::snprintf(text, sizeof(text), "%02X:%02X:%02X:%02X:%02X:%02X",
                static_cast<unsigned>(load_unsigned(bytes, 0, 1)),
                static_cast<unsigned>(load_unsigned(bytes, 1, 1)),
                static_cast<unsigned>(load_unsigned(bytes, 2, 1)),
                static_cast<unsigned>(load_unsigned(bytes, 3, 1)),
                static_cast<unsigned>(load_unsigned(bytes, 4, 1)),
                static_cast<unsigned>(load_unsigned(bytes, 5, 1)));
  return text;
}

std::string timestamp_text(Bytes bytes, const FormatContext &ctx) {
  uint64_t id = load_u64(bytes, 0);
  int64_t ns = load_i64(bytes, 8);
  if (!ctx.strftime_formats || id >= ctx.strftime_formats->size())
    return "(?)";
  return format_strftime((*ctx.strftime_formats)[id],
                         ns + ctx.timestamp_offset_ns, ctx.max_strlen);
}

Value enum_value(const runtime::ValueType &type, Bytes bytes) {
  // bpftrace reads enums as unsigned of their width.
  uint64_t number = load_unsigned(bytes, 0, type.size);
  int64_t as_signed = load_signed(bytes, 0, type.size);
  auto it = type.enum_names.find(static_cast<int64_t>(number));
  if (it == type.enum_names.end())
    it = type.enum_names.find(as_signed);
  if (it != type.enum_names.end())
    return Value::of_symbolic(it->second, number);
  return Value::of_symbolic(std::to_string(number), number);
}

Value fields_value(const runtime::ValueType &type, Bytes bytes,
                   const FormatContext &ctx, uint32_t div) {
  std::vector<Value> elements;
  std::vector<std::string> names;
  for (const auto &f : type.fields) {
    if (f.bitfield_bits) {
      // The field's bits of the word it lives in, as an unsigned number.
      uint64_t word = load_unsigned(bytes, f.offset, f.type.size);
      uint64_t v = f.bitfield_shift >= 64 ? 0 : word >> f.bitfield_shift;
      if (f.bitfield_bits < 64)
        v &= (uint64_t{1} << f.bitfield_bits) - 1;
      elements.push_back(Value::of_uint(v));
    } else {
      elements.push_back(
          decode(f.type, slice(bytes, f.offset, f.type.size), ctx, div));
    }
    names.push_back(f.name);
  }
  if (type.kind == Kind::Tuple)
    return Value::of_tuple(std::move(elements));
  return Value::of_record(std::move(names), std::move(elements));
}

} // namespace

Value divided_integer(Bytes bytes, uint32_t size, bool is_signed,
                      uint32_t div) {
  if (div == 0)
    div = 1;
  if (is_signed) {
    int64_t v = load_signed(bytes, 0, size);
    switch (size) {
    case 1:
      return Value::of_int(
          divide<int8_t>(static_cast<int8_t>(v), static_cast<int8_t>(div)));
    case 2:
      return Value::of_int(
          divide<int16_t>(static_cast<int16_t>(v), static_cast<int16_t>(div)));
    case 4:
      return Value::of_int(
          divide<int32_t>(static_cast<int32_t>(v), static_cast<int32_t>(div)));
    default:
      return Value::of_int(divide<int64_t>(v, static_cast<int64_t>(div)));
    }
  }
  uint64_t v = load_unsigned(bytes, 0, size);
  return Value::of_uint(v / div);
}

Value decode(const runtime::ValueType &type, Bytes bytes,
             const FormatContext &ctx, uint32_t div) {
  switch (type.kind) {
  case Kind::None:
    return Value::none();
  case Kind::Integer:
    return divided_integer(bytes, type.size, type.is_signed, div);
  case Kind::Boolean:
    return Value::of_bool(load_unsigned(bytes, 0, 1) != 0);
  case Kind::Pointer: {
    uint64_t p = load_u64(bytes, 0);
    char text[24];
    std::snprintf(text, sizeof(text), "0x%llx",
                  static_cast<unsigned long long>(p));
    return Value::of_symbolic(text, p);
  }
  case Kind::String:
    return Value::of_string(string_text(bytes, type.size, ctx, type.c_chars));
  case Kind::Buffer: {
    uint32_t capacity = type.size >= 4 ? type.size - 4 : 0;
    uint64_t length = std::min<uint64_t>(load_unsigned(bytes, 0, 4), capacity);
    Bytes data = slice(bytes, 4, length);
    return Value::of_buffer(
        std::string(reinterpret_cast<const char *>(data.data()), data.size()));
  }
  case Kind::Array: {
    std::vector<Value> elements;
    if (!type.fields.empty()) {
      const auto &elem = type.fields[0];
      for (uint32_t i = 0; i < type.count; ++i)
        elements.push_back(
            decode(elem.type,
                   slice(bytes, elem.offset + size_t{i} * elem.type.size,
                         elem.type.size),
                   ctx, div));
    }
    return Value::of_array(std::move(elements));
  }
  case Kind::Tuple:
  case Kind::Record:
  case Kind::Struct:
    return fields_value(type, bytes, ctx, div);
  case Kind::UStack:
  case Kind::KStack: {
    StackAddresses raw = stack_addresses(type, bytes, ctx);
    Value v = Value::of_string(stack_text(type, raw, ctx));
    v.stack = true;
    v.addresses = std::move(raw.addresses);
    v.kernel_stack = type.kind == Kind::KStack;
    v.stack_pid = v.kernel_stack ? -1 : raw.pid;
    v.stack_failed = raw.failed;
    return v;
  }
  case Kind::USym:
    return Value::of_string(
        usym_text(load_u64(bytes, 0), load_i64(bytes, 8), ctx));
  case Kind::KSym:
    return Value::of_string(ksym_text(load_u64(bytes, 0), ctx));
  case Kind::Inet:
    return Value::of_string(inet_text(bytes));
  case Kind::MacAddr:
    return Value::of_string(mac_text(bytes));
  case Kind::Timestamp:
    return Value::of_string(timestamp_text(bytes, ctx));
  case Kind::CgroupPath:
    return Value::of_string(
        ctx.system ? ctx.system->cgroup_path(load_u64(bytes, 0)) : "");
  case Kind::StrError:
    return Value::of_string(std::string(errno_text(load_i64(bytes, 0))));
  case Kind::SignalName:
    return Value::of_string(signal_text(load_i64(bytes, 0)));
  case Kind::SyscallName: {
    // As bpftrace's: the number narrowed to an int, a text for no name.
    auto nr = static_cast<int32_t>(load_i64(bytes, 0));
    std::string_view name = runtime::syscall_name(nr);
    return Value::of_string(name.empty() ? "Unknown syscall"
                                         : std::string(name));
  }
  case Kind::Username:
    return Value::of_string(
        ctx.system ? ctx.system->username(load_u64(bytes, 0)) : "");
  case Kind::Probe: {
    uint64_t id = load_u64(bytes, 0);
    if (ctx.probe_names && id < ctx.probe_names->size())
      return Value::of_string((*ctx.probe_names)[id]);
    return Value::of_string(ctx.name_unknown_probe ? ctx.name_unknown_probe(id)
                                                   : "");
  }
  case Kind::Enum:
    return enum_value(type, bytes);
  }
  return Value::none();
}

} // namespace ubtrace::output
