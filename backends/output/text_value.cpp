#include "backends/output/text_value.h"

#include <cstdio>

namespace ubtrace::output {

void TextSink::write(std::string_view s) {
  if (width > s.size()) {
    std::string pad(width - s.size(), fill);
    if (left) {
      out += s;
      out += pad;
    } else {
      out += pad;
      out += s;
    }
  } else {
    out += s;
  }
  width = 0;
}

std::string buffer_text(std::string_view bytes, bool keep_ascii,
                        bool escape_hex) {
  std::string s;
  char hex[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (keep_ascii && c >= 32 && c <= 126) {
      s += static_cast<char>(c);
    } else if (escape_hex) {
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      s += hex;
    } else {
      std::snprintf(hex, sizeof(hex), i + 1 == bytes.size() ? "%02x" : "%02x ",
                    c);
      s += hex;
    }
  }
  return s;
}

void write_text(TextSink &sink, const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    sink.write("null");
    return;
  case Value::Kind::Bool:
    sink.write(v.boolean ? "true" : "false");
    return;
  case Value::Kind::Int:
    if (sink.showpos && v.sint >= 0)
      sink.write("+" + std::to_string(v.sint));
    else
      sink.write(std::to_string(v.sint));
    return;
  case Value::Kind::UInt:
    sink.write(std::to_string(v.uint));
    return;
  case Value::Kind::String:
  case Value::Kind::Symbolic:
    sink.write(v.text);
    return;
  case Value::Kind::Buffer:
    sink.write(buffer_text(v.text));
    return;
  case Value::Kind::Array:
    sink.write("[");
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i)
        sink.write(",");
      write_text(sink, v.elements[i]);
    }
    sink.write("]");
    return;
  case Value::Kind::Tuple:
    sink.write("(");
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i)
        sink.write(", ");
      write_text(sink, v.elements[i]);
    }
    sink.write(")");
    return;
  case Value::Kind::Record:
    if (v.elements.empty()) {
      sink.write("{}");
      return;
    }
    sink.write("{ ");
    for (size_t i = 0; i < v.elements.size(); ++i) {
      if (i)
        sink.write(", ");
      sink.write(".");
      sink.write(i < v.names.size() ? v.names[i] : "");
      sink.write(" = ");
      write_text(sink, v.elements[i]);
    }
    sink.write(" }");
    return;
  }
}

std::string text_of(const Value &v) {
  TextSink sink;
  write_text(sink, v);
  return std::move(sink.out);
}

} // namespace ubtrace::output
