#include "backends/output/json_value.h"

#include <bit>
#include <cstdio>

namespace ubtrace::output {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) <= 0x1f) {
        char esc[8];
        std::snprintf(esc, sizeof(esc), "\\u%04x",
                      static_cast<unsigned char>(c));
        out += esc;
      } else {
        out += c;
      }
    }
  }
  out += "\"";
  return out;
}

// A double holds a 64-bit magnitude exactly when its significant bits (from
// the highest set bit to the lowest) fit in the 53-bit mantissa.
static bool fits_double(uint64_t magnitude) {
  if (magnitude == 0)
    return true;
  int span = 64 - std::countl_zero(magnitude) - std::countr_zero(magnitude);
  return span <= 53;
}

std::string json_uint(uint64_t v) {
  std::string digits = std::to_string(v);
  return fits_double(v) ? digits : json_string(digits);
}

std::string json_int(int64_t v) {
  std::string digits = std::to_string(v);
  uint64_t magnitude =
      v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return fits_double(magnitude) ? digits : json_string(digits);
}

void write_json(std::string &out, const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += v.boolean ? "true" : "false";
    return;
  case Value::Kind::Int:
    out += json_int(v.sint);
    return;
  case Value::Kind::UInt:
    out += json_uint(v.uint);
    return;
  case Value::Kind::Symbolic:
    out += v.signed_number ? json_int(v.sint) : json_uint(v.uint);
    return;
  case Value::Kind::String:
    out += json_string(v.text);
    return;
  case Value::Kind::Buffer:
    // bpftrace writes each byte as a (signed) char number.
    out += "[";
    for (size_t i = 0; i < v.text.size(); ++i) {
      if (i)
        out += ",";
      out +=
          std::to_string(static_cast<int>(static_cast<signed char>(v.text[i])));
    }
    out += "]";
    return;
  case Value::Kind::Array:
  case Value::Kind::Tuple:
    out += "[";
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i)
        out += ",";
      write_json(out, v.elements[i]);
    }
    out += "]";
    return;
  case Value::Kind::Record:
    out += "{";
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i)
        out += ", ";
      out += json_string(i < v.names.size() ? v.names[i] : "");
      out += ": ";
      write_json(out, v.elements[i]);
    }
    out += "}";
    return;
  }
}

std::string json_of(const Value &v) {
  std::string out;
  write_json(out, v);
  return out;
}

} // namespace ubtrace::output
