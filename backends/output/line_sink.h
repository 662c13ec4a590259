// Standard output for trace results, written so that no line is split.
// The traced program (-c) usually shares the CLI's pipe or terminal; a
// stdio buffer that fills in the middle of a line would write half of it,
// and the program's own output could then land inside the line. LineSink
// writes whole lines, in pieces of at most PIPE_BUF bytes (which a pipe
// writes atomically) that end at a line's end, and keeps a partial last
// line until it ends or the stream is flushed: flush() (sync) writes
// everything, a partial line included, as the session decides when.
#pragma once

#include <cstddef>
#include <streambuf>
#include <vector>

namespace ubtrace::output {

class LineSink final : public std::streambuf {
public:
  explicit LineSink(int fd);
  ~LineSink() override; // writes what is left
  LineSink(const LineSink &) = delete;
  LineSink &operator=(const LineSink &) = delete;

protected:
  int_type overflow(int_type c) override;
  int sync() override;

private:
  // Writes the buffer's whole lines (all of it with `everything`) and keeps
  // the rest at its start.
  void write_out(bool everything);
  void write_all(const char *p, size_t n);

  int fd_;
  std::vector<char> buf_;
  bool failed_ = false; // a write failed (EPIPE): the rest is dropped
};

} // namespace ubtrace::output
