// x86-64 system call names by number (the kernel's syscall table names:
// "stat", "umount2"), from runtime/syscalls/syscalls.inc, for
// syscall_name() (printed at the CLI) and the front end's tracepoint table
// (ast/syscalls.h).
#pragma once

#include <cstdint>
#include <initializer_list>
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

namespace detail {
// A tracepoint field ("decl;name;kind") that is a string the call reads.
constexpr bool is_input_string(std::string_view field) {
  return field.starts_with("const char *;") && field.ends_with(";s");
}

// Bit i set where field i is such a string.
constexpr uint8_t input_strings(std::initializer_list<std::string_view> f) {
  uint8_t mask = 0;
  unsigned i = 0;
  for (std::string_view field : f) {
    if (is_input_string(field))
      mask = uint8_t(mask | (1u << i));
    ++i;
  }
  return mask;
}

// Bit i set where field i points to memory other than such a string
// (a struct, a buffer, an array: its declaration has a '*').
constexpr uint8_t other_pointers(std::initializer_list<std::string_view> f) {
  uint8_t mask = 0;
  unsigned i = 0;
  for (std::string_view field : f) {
    std::string_view decl = field.substr(0, field.find(';'));
    if (!is_input_string(field) && decl.find('*') != std::string_view::npos)
      mask = uint8_t(mask | (1u << i));
    ++i;
  }
  return mask;
}

// The arguments of call `nr` whose tracepoint fields `Mask` picks (bit i
// for argument i); 0 for a number without a tracepoint.
template <uint8_t (*Mask)(std::initializer_list<std::string_view>)>
inline uint8_t syscall_args_where(int64_t nr) {
  switch (nr) {
#define UBT_SYSCALL(nr, event, count, ...)                                     \
  case nr:                                                                     \
    return Mask({__VA_ARGS__});
#include "runtime/syscalls/syscalls.inc"
  }
  return 0;
}
} // namespace detail

// Which arguments of call `nr` are NUL-terminated strings it reads (the
// tracepoint's `const char *` fields: filename, pathname, name...).
inline uint8_t syscall_string_args(int64_t nr) {
  return detail::syscall_args_where<detail::input_strings>(nr);
}

// Which arguments of call `nr` point to other memory (struct stat *,
// char *buf, const struct iovec *...).
inline uint8_t syscall_pointer_args(int64_t nr) {
  return detail::syscall_args_where<detail::other_pointers>(nr);
}

} // namespace ubtrace::runtime
