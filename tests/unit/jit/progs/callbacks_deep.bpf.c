// Callbacks in callbacks: bpf_loop inside a bpf_loop callback, callbacks
// calling subprograms, for_each over an array and a hash map, each frame
// writing into the frames above it through pointers.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "jit_common.h"

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 32);
  __type(key, u32);
  __type(value, u64);
} seen SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8);
  __type(key, u32);
  __type(value, u64);
} weights SEC(".maps");

struct inner_ctx {
  u64 acc;
  u64 mul;
};

struct outer_ctx {
  u64 total;
  u64 inner_trips;
  u64 stop_after;
  u64 calls;
};

static __noinline u64 mix(u64 a, u64 b) {
  return (a ^ (b << 7)) * 0x9e3779b97f4a7c15ull + (a >> 11);
}

static long inner(u32 i, struct inner_ctx *c) {
  c->acc = mix(c->acc, i * c->mul);
  return 0;
}

static long outer(u32 i, struct outer_ctx *c) {
  struct inner_ctx ic = {i, c->total | 1};
  long n = bpf_loop((u32)c->inner_trips, inner, &ic, 0);
  c->total += ic.acc + (u64)n;
  c->calls++;
  u32 key = i & 31;
  u64 v = c->total;
  bpf_map_update_elem(&seen, &key, &v, BPF_ANY);
  return c->calls >= c->stop_after;
}

// bpf_loop(arg0 times) of a callback that runs bpf_loop(arg1 times) itself,
// stopping after arg2 outer calls. Returns a fold of everything.
SEC("uprobe/nested")
int nested(struct jit_args *ctx) {
  struct outer_ctx c = {ctx->arg[3], ctx->arg[1] & 15, ctx->arg[2] + 1, 0};
  long n = bpf_loop((u32)(ctx->arg[0] & 63), outer, &c, 0);
  // Flags must be 0: the helper refuses, the callback never runs.
  long bad = bpf_loop(4, outer, &c, 1);
  return (int)(c.total ^ (c.calls << 8) ^ ((u64)n << 16) ^ (u64)bad);
}

struct sum_ctx {
  u64 sum;
  u64 count;
  u64 limit;
};

static long sum_weights(void *map, u32 *key, u64 *value, struct sum_ctx *c) {
  *value = *value * 3 + *key;
  c->sum += mix(*value, c->count);
  c->count++;
  return c->count >= c->limit;
}

static long sum_seen(void *map, u32 *key, u64 *value, struct sum_ctx *c) {
  c->sum ^= *value + *key;
  c->count++;
  return 0;
}

// for_each over an array (values rewritten by the callback, early stop at
// arg0 elements) and over the hash map filled by `nested`.
SEC("uprobe/each")
int each(struct jit_args *ctx) {
  struct sum_ctx a = {0, 0, (ctx->arg[0] & 7) + 1};
  long na = bpf_for_each_map_elem(&weights, sum_weights, &a, 0);
  struct sum_ctx h = {0, 0, 0};
  long nh = bpf_for_each_map_elem(&seen, sum_seen, &h, 0);
  return (int)(a.sum ^ h.sum ^ ((u64)na << 20) ^ ((u64)nh << 24) ^ h.count);
}

char LICENSE[] SEC("license") = "GPL";
