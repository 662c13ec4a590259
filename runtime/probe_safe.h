// What the probe path uses instead of libc.
//
// Code that runs when a hook fires (the dispatcher, thread-state setup and
// teardown, helpers, map updates, the fault handler) must not call a libc
// function: the traced program may have that very function hooked (a
// return hook on the memset the CPU uses once aborted every thread exit,
// as the thread-state teardown memset the state the hook had just armed),
// and libc functions may take locks (malloc's, the loader's, fork's).
// Compilers turn plain loops and struct copies into memset/memcpy calls,
// so the primitives here are inline assembly, which they cannot: string
// instructions (no vector registers, so the general-registers-only
// dispatcher may use them too) and raw system calls.
//
// tests/faults/hooks/probe_path_calls.py checks the agent's object code:
// nothing reachable from the probe path calls through the PLT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <sys/syscall.h>

namespace ubtrace::runtime::probe_safe {

inline void copy_bytes(void *dst, const void *src, size_t n) {
  __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

inline void fill_bytes(void *dst, uint8_t value, size_t n) {
  __asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(value) : "memory");
}

// Copies n bytes that may overlap (memmove's contract).
inline void move_bytes(void *dst, const void *src, size_t n) {
  auto d = reinterpret_cast<uintptr_t>(dst);
  auto s = reinterpret_cast<uintptr_t>(src);
  if (d <= s || d >= s + n) {
    copy_bytes(dst, src, n);
    return;
  }
  // Backwards, from the last byte; the direction flag is clear again after.
  void *dlast = static_cast<char *>(dst) + n - 1;
  const void *slast = static_cast<const char *>(src) + n - 1;
  __asm__ volatile("std\n\trep movsb\n\tcld"
                   : "+D"(dlast), "+S"(slast), "+c"(n)
                   :
                   : "memory", "cc");
}

// The length of the NUL-terminated string at s, at most max.
inline size_t bounded_length(const char *s, size_t max) {
  size_t n = 0;
  while (n < max && *static_cast<const volatile char *>(s + n) != 0)
    ++n;
  return n;
}

// System calls without libc's wrappers. Return the kernel's value (-errno
// on failure); errno is untouched.
inline long raw_syscall(long nr, long a = 0, long b = 0, long c = 0, long d = 0,
                        long e = 0, long f = 0) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

// The CPU time thread `tid` has used, in nanoseconds, or -1. The kernel
// reads another thread's CPU clock only within the caller's process, so -1
// also means "not a thread of this process". The clock id is
// CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD with the tid inverted above them;
// clock_gettime is a call every sandbox allows.
inline int64_t thread_cpu_ns(int64_t tid) {
  if (tid <= 0)
    return -1;
  const long clock = static_cast<long>((~static_cast<uint64_t>(tid)) << 3 | 6);
  timespec t;
  if (raw_syscall(SYS_clock_gettime, clock, reinterpret_cast<long>(&t)) != 0)
    return -1;
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

} // namespace ubtrace::runtime::probe_safe
