// Values in bpftrace's text form: tuples "(1, abc)", arrays "[1,2]",
// records "{ .a = 1 }", buffers with \xNN escapes.
#pragma once

#include "backends/output/value.h"

#include <string>
#include <string_view>

namespace ubtrace::output {

// A stream-like writer. bpftrace formats printf conversions through C++
// streams, where a field width pads only the next single write (for a tuple
// that is its "("), and showpos marks every signed integer written. Printing
// values outside printf uses it with no width and no '+'.
struct TextSink {
  std::string out;
  size_t width = 0; // pending; consumed by the next write
  char fill = ' ';
  bool left = false;
  bool showpos = false;

  void write(std::string_view s);
};

void write_text(TextSink &sink, const Value &v);
std::string text_of(const Value &v);

// buf() bytes: printable ASCII kept, the rest as \xNN (%r); with
// keep_ascii false every byte is \xNN (%rx); with escape_hex false too,
// bytes are "NN" separated by spaces (%rh).
std::string buffer_text(std::string_view bytes, bool keep_ascii = true,
                        bool escape_hex = true);

} // namespace ubtrace::output
