// Bounded loops as clang emits them at -O2 (unrolling disabled so the back
// edges stay): constant trip counts, bounds from data capped by a constant,
// nested loops, early exits, and loops over map values and stack arrays.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, unsigned int);
  __type(value, unsigned long long[64]);
} table SEC(".maps");

// Sum of i*i for i < 100.
SEC("uprobe/squares")
int squares(struct args *ctx) {
  unsigned long long sum = 0;
#pragma clang loop unroll(disable)
  for (unsigned long long i = 0; i < 100; i++)
    sum += i * i;
  return (int)(sum + ctx->arg[0]);
}

// Sum of 1..n with n = min(arg[0], 1000).
SEC("uprobe/triangle")
int triangle(struct args *ctx) {
  unsigned int n = ctx->arg[0];
  unsigned long long sum = 0;
#pragma clang loop unroll(disable)
  for (unsigned int i = 1; i <= n && i <= 1000; i++)
    sum += i;
  return (int)sum;
}

// Nested: number of (i, j) with i < 20, j < 20 and (i ^ j) & arg[0].
SEC("uprobe/nested")
int nested(struct args *ctx) {
  int count = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 20; i++) {
#pragma clang loop unroll(disable)
    for (int j = 0; j < 20; j++)
      if ((i ^ j) & ctx->arg[0])
        count++;
  }
  return count;
}

// Fills the table with value * index, then returns the index of the first
// element above arg[1] (64 if none).
SEC("uprobe/scan")
int scan(struct args *ctx) {
  unsigned int zero = 0;
  unsigned long long *t = bpf_map_lookup_elem(&table, &zero);
  if (!t)
    return -1;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 64; i++)
    t[i] = ctx->arg[0] * i;
  int i = 0;
#pragma clang loop unroll(disable)
  for (; i < 64; i++)
    if (t[i] > ctx->arg[1])
      break;
  return i;
}

// Reverses a stack array of 16 bytes taken from arg[0..1] and folds it.
SEC("uprobe/reverse")
int reverse(struct args *ctx) {
  unsigned char buf[16];
  __builtin_memcpy(buf, &ctx->arg[0], 16);
#pragma clang loop unroll(disable)
  for (int i = 0; i < 8; i++) {
    unsigned char t = buf[i];
    buf[i] = buf[15 - i];
    buf[15 - i] = t;
  }
  unsigned long long folded = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 16; i++)
    folded = folded * 31 + buf[i];
  return (int)folded;
}

// Index from data, checked against the array bound.
SEC("uprobe/lookup")
int lookup(struct args *ctx) {
  unsigned int zero = 0;
  unsigned long long *t = bpf_map_lookup_elem(&table, &zero);
  if (!t)
    return -1;
  unsigned long long idx = ctx->arg[0];
  if (idx >= 64)
    return -2;
  return (int)t[idx];
}

char LICENSE[] SEC("license") = "GPL";
