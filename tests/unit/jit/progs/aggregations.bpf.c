// What bpftrace programs do all day: look a key up, insert it if missing,
// update the value (plain, atomic, min/max), bucket a value into a log2
// histogram, and send an event. Against the real shared-memory maps.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "jit_common.h"

struct stats {
  u64 count, sum, min, max;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, u64);
  __type(value, struct stats);
} by_key SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 66);
  __type(key, u32);
  __type(value, u64);
} log2_hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, u32);
  __type(value, u64);
} totals SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} events SEC(".maps");

struct event {
  u64 key, value, bucket;
};

static __always_inline u32 log2_bucket(u64 v) {
  if (v == 0)
    return 0;
  u32 b = 1;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 64 && v > 1; i++) {
    v >>= 1;
    b++;
  }
  return b;
}

SEC("uprobe/record")
int record(struct jit_args *ctx) {
  u64 key = ctx->arg[0] % 23, value = ctx->arg[1];
  struct stats *s = bpf_map_lookup_elem(&by_key, &key);
  if (!s) {
    struct stats init = {0, 0, value, value};
    bpf_map_update_elem(&by_key, &key, &init, BPF_NOEXIST);
    s = bpf_map_lookup_elem(&by_key, &key);
    if (!s)
      return -1;
  }
  __sync_fetch_and_add(&s->count, 1);
  s->sum += value;
  if (value < s->min)
    s->min = value;
  if (value > s->max)
    s->max = value;

  u32 bucket = log2_bucket(value);
  u64 *slot = bpf_map_lookup_elem(&log2_hist, &bucket);
  if (slot)
    (*slot)++;

  u32 t = (u32)(value & 3);
  u64 *total = bpf_map_lookup_elem(&totals, &t);
  if (total) {
    u64 old = __sync_fetch_and_add(total, value);
    __sync_fetch_and_or(total, old & 0xf0);
    __sync_fetch_and_xor(total, key);
    __sync_fetch_and_and(total, ~0x100ull);
    u64 seen = __sync_val_compare_and_swap(total, value, old);
    __sync_lock_test_and_set(total, seen + 1);
  }

  if (ctx->arg[2] & 1) {
    struct event e = {key, value, bucket};
    bpf_ringbuf_output(&events, &e, sizeof(e), 0);
  }
  return (int)bucket;
}

// Deletes a key; returns the helper's result.
SEC("uprobe/forget")
int forget(struct jit_args *ctx) {
  u64 key = ctx->arg[0] % 23;
  return (int)bpf_map_delete_elem(&by_key, &key);
}

char LICENSE[] SEC("license") = "GPL";
