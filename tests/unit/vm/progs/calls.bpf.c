// BPF-to-BPF calls: static non-inlined functions, nested three deep, with a
// pointer into the caller's stack passed down and written by the callee.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

static __noinline unsigned long long mix(unsigned long long a,
                                         unsigned long long b) {
  return a * 31 + (b ^ (a >> 3));
}

static __noinline void fill(unsigned long long *out, int n,
                            unsigned long long seed) {
#pragma clang loop unroll(disable)
  for (int i = 0; i < n && i < 8; i++)
    out[i] = mix(seed, i);
}

static __noinline unsigned long long total(unsigned long long seed) {
  unsigned long long buf[8] = {};
  fill(buf, 8, seed);
  unsigned long long t = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 8; i++)
    t += buf[i];
  return t;
}

// Returns total(arg[0]) folded to 32 bits.
SEC("uprobe/calls")
int calls(struct args *ctx) {
  unsigned long long t = total(ctx->arg[0]);
  return (int)(t ^ (t >> 32));
}

// Calls mix directly too: the same subprogram linked into two programs.
SEC("uprobe/direct")
int direct(struct args *ctx) { return (int)mix(ctx->arg[0], ctx->arg[1]); }

char LICENSE[] SEC("license") = "GPL";
