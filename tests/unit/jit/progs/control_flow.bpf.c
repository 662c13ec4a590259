// Shapes that make interesting machine code after lifting: a dense switch
// (a jump table in .rodata once lifted), constant buffers built on the stack
// (constant pools), a 400-byte frame, and a chain of subprograms passing
// stack pointers down.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "jit_common.h"

static __noinline u64 classify(u64 v) {
  switch (v & 15) {
  case 0: return v * 3;
  case 1: return v ^ 0x55;
  case 2: return v + 1000;
  case 3: return v >> 3;
  case 4: return ~v;
  case 5: return v * v;
  case 6: return v | 0xf0f0;
  case 7: return v - 77;
  case 8: return v << 5;
  case 9: return v & 0xabcdef;
  case 10: return v / 7;
  case 11: return v % 13;
  default: return v;
  }
}

// Returns how many it filled (a void subprogram may exit with r0 unset,
// which the verifier refuses).
static __noinline int fill(u64 *buf, int n, u64 seed) {
  int i;
#pragma clang loop unroll(disable)
  for (i = 0; i < n && i < 48; i++)
    buf[i] = classify(seed + i) ^ buf[i];
  return i;
}

static __noinline u64 fold(const u64 *buf, int n) {
  u64 h = 0xcbf29ce484222325ull;
#pragma clang loop unroll(disable)
  for (int i = 0; i < n && i < 48; i++)
    h = (h ^ buf[i]) * 0x100000001b3ull;
  return h;
}

SEC("uprobe/dispatch")
int dispatch(struct jit_args *ctx) {
  u64 acc = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 8; i++)
    acc += classify(ctx->arg[i]);
  return (int)(acc ^ (acc >> 32));
}

SEC("uprobe/buffers")
int buffers(struct jit_args *ctx) {
  u64 big[48] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                 0x1111, 0x2222, 0x3333, 0x4444};
  int filled = fill(big, (int)(ctx->arg[0] & 63), ctx->arg[1]);
  u64 h = fold(big, 48) + filled;
  u32 words[8] = {0xdeadbeef, 0xcafebabe, 0x12345678, 0x9abcdef0,
                  0x0badf00d, 0xfeedface, 0x8badf00d, 0x1badb002};
  for (int i = 0; i < 8; i++)
    h ^= (u64)words[i] << (i * 4);
  return (int)(h ^ (h >> 29));
}

char LICENSE[] SEC("license") = "GPL";
