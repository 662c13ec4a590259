// x86-64 system call names by number (the kernel's syscall table names:
// "stat", "umount2"), from runtime/syscalls/syscalls.inc, for
// syscall_name() (printed at the CLI) and the front end's tracepoint table
// (ast/syscalls.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace ubtrace::runtime {

// Empty for a number no system call has.
inline std::string_view syscall_name(int64_t nr) {
  switch (nr) {
#define UBT_SYSCALL_NAME(nr, name)                                             \
  case nr:                                                                     \
    return name;
#include "runtime/syscalls/syscalls.inc"
  }
  return {};
}

} // namespace ubtrace::runtime
