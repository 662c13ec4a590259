// A system call without libc, for agent code that runs on program threads
// at moments where every libc function may carry one of the trace's probes
// (the exit handler, the fork-child handler, a hooked dlclose's return): a
// probed close() or sendmsg would count the agent's own calls as the
// program's.
#pragma once

namespace ubtrace::agent {

inline long raw_syscall(long n, long a = 0, long b = 0, long c = 0,
                        long d = 0) {
  long ret;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

// Copies bytes with plain stores the compiler cannot turn into memcpy.
inline void copy_without_libc(void *to, const void *from, unsigned long n) {
  volatile unsigned char *d = static_cast<unsigned char *>(to);
  const unsigned char *s = static_cast<const unsigned char *>(from);
  for (unsigned long i = 0; i < n; i++)
    d[i] = s[i];
}

} // namespace ubtrace::agent
