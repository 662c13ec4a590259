// A chain of calls built -O2 without frame pointers (see CMakeLists.txt):
// chain_top -> chain_a -> chain_b -> ... -> chain_leaf, whose frames only
// CFI can walk. The leaf captures its registers and glibc's backtrace()
// of the same stack, then hands both to the test's callback.
#include <execinfo.h>
#include <stdint.h>

typedef void (*chain_cb)(uint64_t rip, uint64_t rsp, uint64_t rbp,
                         void **bt, int nbt);

volatile int chain_sink;

__attribute__((noinline)) static void chain_leaf(chain_cb cb, int depth) {
  void *bt[64];
  uint64_t rip, rsp, rbp;
  // Registers as they are at the call to backtrace(): what follows in
  // this frame reads the same CFI row.
  __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                   : "=r"(rip), "=r"(rsp), "=r"(rbp));
  int n = backtrace(bt, 64);
  cb(rip, rsp, rbp, bt, n);
  chain_sink += depth;
}

__attribute__((noinline)) static void chain_step(chain_cb cb, int depth) {
  // A frame of its own (locals the compiler keeps on the stack).
  volatile char pad[40];
  pad[depth % 40] = (char)depth;
  if (depth <= 0)
    chain_leaf(cb, depth + pad[0]);
  else
    chain_step(cb, depth - 1);
  chain_sink += pad[depth % 40];
}

__attribute__((noinline)) void chain_top(chain_cb cb, int depth) {
  chain_step(cb, depth);
  chain_sink++;
}
