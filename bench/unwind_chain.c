// A chain of CHAIN_DEPTH calls for the unwind benchmark, compiled twice
// (unwind_bench.cmake): with frame pointers (prefix fp_) and without
// (prefix nofp_). The leaf captures its registers and runs the callback
// while the whole chain is live.
#include <stdint.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(CHAIN_PREFIX, x)

typedef void (*chain_cb)(uint64_t rip, uint64_t rsp, uint64_t rbp);

volatile int NAME(sink);

__attribute__((noinline)) static void NAME(leaf)(chain_cb cb) {
  uint64_t rip, rsp, rbp;
  __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                   : "=r"(rip), "=r"(rsp), "=r"(rbp));
  cb(rip, rsp, rbp);
  NAME(sink)++;
}

__attribute__((noinline)) static void NAME(step)(chain_cb cb, int depth) {
  volatile char pad[24];
  pad[depth % 24] = (char)depth;
  if (depth <= 1)
    NAME(leaf)(cb);
  else
    NAME(step)(cb, depth - 1);
  NAME(sink) += pad[depth % 24];
}

__attribute__((noinline)) void NAME(chain)(chain_cb cb, int depth) {
  NAME(step)(cb, depth);
  NAME(sink)++;
}
