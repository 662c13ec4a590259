// Reading and writing another process's memory through /proc/PID/mem
// (ptrace access rights; writes reach read-only pages too, copying them for
// this process). open_thread() goes through the mem file of a thread the
// caller has seized, which kernels restricting forced writes to the tracer
// (proc_mem.force_override=ptrace) require for read-only pages.
#pragma once

#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ubtrace::runtime::inject {

class RemoteMemory {
public:
  static Result<RemoteMemory> open(pid_t pid);
  static Result<RemoteMemory> open_thread(pid_t pid, pid_t tid);

  Result<void> read(uint64_t address, void *out, size_t size) const;
  Result<void> write(uint64_t address, const void *data, size_t size) const;
  // A NUL-terminated string of at most `limit` bytes.
  Result<std::string> read_string(uint64_t address, size_t limit) const;

  template <class T> Result<T> read_value(uint64_t address) const {
    T value{};
    if (auto ok = read(address, &value, sizeof value); !ok)
      return std::move(ok).take_error();
    return value;
  }

private:
  RemoteMemory(pid_t pid, UniqueFd fd) : pid_(pid), fd_(std::move(fd)) {}
  pid_t pid_;
  UniqueFd fd_;
};

} // namespace ubtrace::runtime::inject
