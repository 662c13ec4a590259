// C test functions: recursion, longjmp, a plain counted function.
#include <setjmp.h>

long hk_fib_calls;

__attribute__((noinline)) long hk_fib(long n) {
  __atomic_fetch_add(&hk_fib_calls, 1, __ATOMIC_RELAXED);
  if (n < 2)
    return n;
  long a = hk_fib(n - 1);
  long b = hk_fib(n - 2);
  // Keeps the compiler from turning the second call into a loop (then the
  // function would be entered fewer times than the count says).
  __asm__ volatile("" : "+r"(a), "+r"(b));
  return a + b;
}

// longjmps out when x < 0, from a nested frame.
__attribute__((noinline)) static void jump_out(jmp_buf *env) {
  longjmp(*env, 1);
}

__attribute__((noinline)) long hk_jumper(jmp_buf *env, long x) {
  if (x < 0)
    jump_out(env);
  return x * 2;
}

__attribute__((noinline)) long hk_counted(long x) {
  __asm__ volatile("" ::: "memory");
  return x * 3 + 1;
}

// Eight arguments: the last two on the stack, read relative to the entry
// rsp (a return hook must leave them where they were).
__attribute__((noinline)) long hk_eight(long a, long b, long c, long d,
                                        long e, long f, long g, long h) {
  __asm__ volatile("" ::: "memory");
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

// Linear recursion n deep (the asm keeps the compiler from turning it into
// a loop).
__attribute__((noinline)) long hk_depth(long n) {
  if (n == 0)
    return 0;
  long r = hk_depth(n - 1);
  __asm__ volatile("" : "+r"(r));
  return r + 1;
}
