// C++ functions for the unwinding tests: throws through (and from) hooked
// frames, backtraces across one, and a thread exiting through one.
#include "tests/unit/hook/exception_functions.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdexcept>

extern "C" {

__attribute__((noinline)) int hk_thrower(int x) {
  if (x > 0)
    throw std::runtime_error("thrown " + std::to_string(x));
  return -x;
}

__attribute__((noinline)) int hk_middle(int x) {
  int r = hk_thrower(x);
  __asm__ volatile("" : "+r"(r));
  return r + 1;
}

__attribute__((noinline)) int hk_outer(int x) {
  int r = hk_middle(x);
  __asm__ volatile("" : "+r"(r));
  return r + 10;
}

__attribute__((noinline)) int hk_catcher(int x) {
  try {
    return hk_thrower(x);
  } catch (const std::runtime_error &) {
    return 1000;
  }
}

__attribute__((noinline)) int hk_bt_leaf(void **frames, int max) {
  int n = backtrace(frames, max);
  __asm__ volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) int hk_bt_middle(void **frames, int max) {
  int n = hk_bt_leaf(frames, max);
  __asm__ volatile("" : "+r"(n));
  return n;
}

__attribute__((noinline)) int hk_bt_caller(void **frames, int max) {
  int n = hk_bt_middle(frames, max);
  __asm__ volatile("" : "+r"(n));
  return n;
}

__attribute__((noinline)) void hk_exit_thread(long code) {
  pthread_exit(reinterpret_cast<void *>(code));
}

__attribute__((noinline)) long hk_exiting_middle(long code) {
  hk_exit_thread(code);
  return 0;
}
}
