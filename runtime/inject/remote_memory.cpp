#include "runtime/inject/remote_memory.h"

#include "runtime/inject/hex.h"
#include "runtime/inject/sys_error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
Result<RemoteMemory> RemoteMemory::open(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid())
    return sys_error("cannot open " + path, errno);
  return RemoteMemory(pid, std::move(fd));
}

Result<RemoteMemory> RemoteMemory::open_thread(pid_t pid, pid_t tid) {
  std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/mem";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid())
    return sys_error("cannot open " + path, errno);
  return RemoteMemory(pid, std::move(fd));
}

Result<void> RemoteMemory::read(uint64_t address, void *out,
                                size_t size) const {
  auto *bytes = static_cast<char *>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_.get(), bytes + done, size - done,
                        static_cast<off_t>(address + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sys_error("reading " + std::to_string(size) + " bytes at " +
                           hex(address) + " in process " + std::to_string(pid_),
                       n == 0 ? EIO : errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<void> RemoteMemory::write(uint64_t address, const void *data,
                                 size_t size) const {
  const auto *bytes = static_cast<const char *>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd_.get(), bytes + done, size - done,
                         static_cast<off_t>(address + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sys_error("writing " + std::to_string(size) + " bytes at " +
                           hex(address) + " in process " + std::to_string(pid_),
                       n == 0 ? EIO : errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<std::string> RemoteMemory::read_string(uint64_t address,
                                              size_t limit) const {
  std::string text;
  char chunk[256];
  while (text.size() < limit) {
    size_t want = std::min(sizeof chunk, limit - text.size());
    // Stay within the page: the next one may be unmapped.
    size_t to_page_end = 4096 - ((address + text.size()) & 4095);
    want = std::min(want, to_page_end);
    if (auto ok = read(address + text.size(), chunk, want); !ok)
      return std::move(ok).take_error();
    for (size_t i = 0; i < want; ++i) {
      if (chunk[i] == '\0')
        return text;
      text.push_back(chunk[i]);
    }
  }
  return text;
}

} // namespace ubtrace::runtime::inject
