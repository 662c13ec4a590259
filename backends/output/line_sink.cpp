#include "backends/output/line_sink.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <unistd.h>

namespace ubtrace::output {
namespace {

constexpr size_t kInitialBytes = 64 * 1024;
// A line longer than this is written in pieces: the alternative is an
// unbounded buffer.
constexpr size_t kMaxBytes = 1 << 20;

} // namespace

LineSink::LineSink(int fd) : fd_(fd), buf_(kInitialBytes) {
  setp(buf_.data(), buf_.data() + buf_.size());
}

LineSink::~LineSink() {
  write_out(true);
}

void LineSink::write_all(const char *p, size_t n) {
  while (n > 0 && !failed_) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      failed_ = true;
      return;
    }
    p += w;
    n -= size_t(w);
  }
}

void LineSink::write_out(bool everything) {
  const char *begin = pbase(), *end = pptr();
  const char *last = end;
  if (!everything) {
    while (last > begin && last[-1] != '\n')
      --last;
  }
  // Pieces of whole lines, each at most PIPE_BUF bytes unless one line is
  // longer.
  const char *at = begin;
  while (at < last) {
    const char *limit = at + std::min<size_t>(PIPE_BUF, size_t(last - at));
    const char *cut = limit;
    if (limit < last) {
      while (cut > at && cut[-1] != '\n')
        --cut;
      if (cut == at) { // one line longer than PIPE_BUF: to its end
        const void *nl = std::memchr(limit, '\n', size_t(last - limit));
        cut = nl ? static_cast<const char *>(nl) + 1 : last;
      }
    }
    write_all(at, size_t(cut - at));
    at = cut;
  }
  size_t rest = size_t(end - last);
  std::memmove(buf_.data(), last, rest);
  setp(buf_.data(), buf_.data() + buf_.size());
  pbump(int(rest));
}

LineSink::int_type LineSink::overflow(int_type c) {
  write_out(false);
  if (pptr() == epptr()) {
    // One line fills the buffer: grow it, up to the cap, then write it.
    if (buf_.size() < kMaxBytes) {
      size_t used = size_t(pptr() - pbase());
      buf_.resize(buf_.size() * 2);
      setp(buf_.data(), buf_.data() + buf_.size());
      pbump(int(used));
    } else {
      write_out(true);
    }
  }
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int LineSink::sync() {
  write_out(true);
  return failed_ ? -1 : 0;
}

} // namespace ubtrace::output
