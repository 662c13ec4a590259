// Value: a stored value decoded from its raw bytes, in the shape printing
// needs. It is the common currency of the text and JSON printers and of
// printf: integers keep their signedness (printf's '+' flag only marks signed
// ones), symbolic values (pointers, enums, histogram labels) print a name in
// text and their number in JSON.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ubtrace::output {

struct Value {
  enum class Kind : uint8_t {
    None,     // no value: "null"
    Bool,     // "true" / "false"
    Int,      // signed integer, any stored size
    UInt,     // unsigned integer, any stored size
    String,   // text (already resolved: symbols, inet, usernames, ...)
    Symbolic, // text for people, number for machines
    Buffer,   // raw bytes of buf()
    Array,    // printed "[a,b]"
    Tuple,    // printed "(a, b)"
    Record,   // printed "{ .a = 1, .b = 2 }" (records and C structs)
  };

  Kind kind = Kind::None;
  bool boolean = false;
  int64_t sint = 0;
  uint64_t uint = 0;              // UInt, and the number of a Symbolic
  bool signed_number = false;     // Symbolic: its number is `sint`, not `uint`
  std::string text;               // String, Symbolic's name, Buffer's bytes
  std::vector<Value> elements;    // Array, Tuple, Record
  std::vector<std::string> names; // Record: one name per element
  // A String holding a stack's lines (indented by 8, or 4 inside map keys).
  bool stack = false;
  // A stack's addresses, innermost first (an unwind failure ends them), and
  // the process of a user stack (-1: unknown; kernel stacks keep -1 and
  // kernel_stack): for formats that keep addresses (pprof.h).
  std::vector<uint64_t> addresses;
  int64_t stack_pid = -1;
  bool kernel_stack = false;
  bool stack_failed = false; // the unwinder stopped short

  static Value none() { return Value{}; }
  static Value of_bool(bool b) {
    Value v;
    v.kind = Kind::Bool;
    v.boolean = b;
    return v;
  }
  static Value of_int(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.sint = i;
    return v;
  }
  static Value of_uint(uint64_t u) {
    Value v;
    v.kind = Kind::UInt;
    v.uint = u;
    return v;
  }
  static Value of_string(std::string s) {
    Value v;
    v.kind = Kind::String;
    v.text = std::move(s);
    return v;
  }
  static Value of_symbolic(std::string name, uint64_t number) {
    Value v;
    v.kind = Kind::Symbolic;
    v.text = std::move(name);
    v.uint = number;
    return v;
  }
  static Value of_signed_symbolic(std::string name, int64_t number) {
    Value v = of_symbolic(std::move(name), static_cast<uint64_t>(number));
    v.sint = number;
    v.signed_number = true;
    return v;
  }
  static Value of_buffer(std::string bytes) {
    Value v;
    v.kind = Kind::Buffer;
    v.text = std::move(bytes);
    return v;
  }
  static Value of_array(std::vector<Value> elements) {
    Value v;
    v.kind = Kind::Array;
    v.elements = std::move(elements);
    return v;
  }
  static Value of_tuple(std::vector<Value> elements) {
    Value v;
    v.kind = Kind::Tuple;
    v.elements = std::move(elements);
    return v;
  }
  static Value of_record(std::vector<std::string> names,
                         std::vector<Value> elements) {
    Value v;
    v.kind = Kind::Record;
    v.names = std::move(names);
    v.elements = std::move(elements);
    return v;
  }

  bool is_integer() const { return kind == Kind::Int || kind == Kind::UInt; }
};

} // namespace ubtrace::output
