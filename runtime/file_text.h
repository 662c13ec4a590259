// The whole of a file, read with read(2): for /proc files of a process
// that may exit while they are read (the kernel then answers ESRCH, which
// a std::filebuf throws as an exception from wherever it is read) and for
// binaries read in one piece. Header only, no exceptions.
#pragma once

#include "runtime/result.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace ubtrace {

// The rest of an open file descriptor (named `path` in errors); the fd
// stays open.
inline Result<std::string> read_fd(int fd, const std::string &path) {
  std::string text;
  char chunk[16384];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return make_error("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0)
      return text;
    text.append(chunk, static_cast<size_t>(n));
  }
}

inline Result<std::string> read_file(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error("cannot read " + path + ": " + std::strerror(errno));
  auto text = read_fd(fd, path);
  ::close(fd);
  return text;
}

} // namespace ubtrace
