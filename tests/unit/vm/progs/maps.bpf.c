// Maps: counting in a hash map with the lookup/NULL-check/update idiom,
// deleting, an array map indexed by a bounded number, and a struct value
// copied whole.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

struct stats {
  unsigned long long count;
  unsigned long long sum;
  unsigned long long min;
  unsigned long long max;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 128);
  __type(key, unsigned long long);
  __type(value, struct stats);
} by_key SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 16);
  __type(key, unsigned int);
  __type(value, unsigned long long);
} buckets SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, unsigned int);
  __type(value, struct stats);
} scratch SEC(".maps");

// arg[0] = key, arg[1] = value: aggregate value per key, and count it in a
// log2-ish bucket.
SEC("uprobe/record")
int record(struct args *ctx) {
  unsigned long long key = ctx->arg[0];
  unsigned long long value = ctx->arg[1];
  struct stats *s = bpf_map_lookup_elem(&by_key, &key);
  if (s) {
    s->count++;
    s->sum += value;
    if (value < s->min)
      s->min = value;
    if (value > s->max)
      s->max = value;
  } else {
    struct stats init = {1, value, value, value};
    bpf_map_update_elem(&by_key, &key, &init, BPF_NOEXIST);
  }
  unsigned int bucket = 0;
  for (unsigned long long v = value; v > 1 && bucket < 15; v >>= 1)
    bucket++;
  unsigned long long *b = bpf_map_lookup_elem(&buckets, &bucket);
  if (b)
    __sync_fetch_and_add(b, 1);
  return 0;
}

// arg[0] = key: remove it; returns the helper's result.
SEC("uprobe/forget")
int forget(struct args *ctx) {
  unsigned long long key = ctx->arg[0];
  return bpf_map_delete_elem(&by_key, &key);
}

// Copies the stats of key arg[0] into the per-cpu scratch value and
// returns count * 1000 + max, or -1 when absent.
SEC("uprobe/copy")
int copy(struct args *ctx) {
  unsigned long long key = ctx->arg[0];
  unsigned int zero = 0;
  struct stats *s = bpf_map_lookup_elem(&by_key, &key);
  struct stats *dst = bpf_map_lookup_elem(&scratch, &zero);
  if (!s || !dst)
    return -1;
  *dst = *s;
  return (int)(dst->count * 1000 + dst->max);
}

char LICENSE[] SEC("license") = "GPL";
