// Values in bpftrace's JSON form: tuples and arrays as JSON arrays written
// without spaces ("[1,2]"), records as objects written with them
// ({"a": 1, "b": 2}), symbolic values (pointers, enums) as their number,
// buffers as arrays of byte values.
#pragma once

#include "backends/output/value.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ubtrace::output {

// A JSON string literal. bpftrace escapes ", \, \n, \r, \t and other
// control characters (\u00XX). Bytes >= 0x80 pass through unchanged, so
// UTF-8 text stays valid (bpftrace 0.26 writes them as "\uffffffXX", which
// is not valid JSON).
std::string json_string(std::string_view s);

// Integers that a double cannot hold exactly are written as strings, as
// bpftrace does (RFC 8259 interoperability).
std::string json_int(int64_t v);
std::string json_uint(uint64_t v);

void write_json(std::string &out, const Value &v);
std::string json_of(const Value &v);

} // namespace ubtrace::output
