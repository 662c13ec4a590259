// Helpers with callbacks, run by the VM itself: bpf_loop with a context on
// the caller's stack, and bpf_for_each_map_elem over a hash map with an
// early stop.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, unsigned int);
  __type(value, unsigned long long);
} values SEC(".maps");

struct loop_ctx {
  unsigned long long sum;
  unsigned long long limit;
  unsigned long long calls;
};

static long add_index(__u32 index, void *data) {
  struct loop_ctx *c = data;
  c->calls++;
  if (index >= c->limit)
    return 1; // stop
  c->sum += index;
  return 0;
}

// bpf_loop(arg[0] times) summing indices below arg[1]; returns
// sum * 1000 + number of callback calls (the loop's result in bits 32+).
SEC("uprobe/looped")
int looped(struct args *ctx) {
  struct loop_ctx c = {0, ctx->arg[1], 0};
  long done = bpf_loop(ctx->arg[0], add_index, &c, 0);
  return (int)(c.sum * 1000 + c.calls + (done << 20));
}

struct each_ctx {
  unsigned long long sum;
  unsigned long long seen;
  unsigned long long stop_at;
};

static long sum_values(void *map, unsigned int *key, unsigned long long *value,
                       struct each_ctx *c) {
  c->sum += *value + *key;
  c->seen++;
  return c->seen >= c->stop_at;
}

// Puts keys 0..arg[0]-1 (at most 32) with value key*10, then sums them with
// for_each, stopping after arg[1] elements. Returns sum << 8 | visited.
SEC("uprobe/each")
int each(struct args *ctx) {
#pragma clang loop unroll(disable)
  for (unsigned int k = 0; k < 32 && k < ctx->arg[0]; k++) {
    unsigned long long v = k * 10;
    bpf_map_update_elem(&values, &k, &v, BPF_ANY);
  }
  struct each_ctx c = {0, 0, ctx->arg[1]};
  long visited = bpf_for_each_map_elem(&values, sum_values, &c, 0);
  return (int)(c.sum << 8 | (unsigned long long)visited);
}

char LICENSE[] SEC("license") = "GPL";
