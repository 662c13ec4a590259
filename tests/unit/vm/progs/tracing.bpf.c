// What bpftrace-style probes compile to: `@[comm] = count()`,
// `@h = hist(arg1)` and `printf("%d %s\n", pid, str(arg0))`, plus a string
// comparison of comm against a literal.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

struct comm_key {
  char comm[16];
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, struct comm_key);
  __type(value, unsigned long long);
} counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, unsigned int);
  __type(value, unsigned long long[66]);
} hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 16);
} events SEC(".maps");

struct printf_event {
  unsigned long long format_id;
  unsigned long long pid;
  char str[64];
};

// bpftrace's hist(): bucket 0 for negative, 1 for 0, then 2 + log2(v).
static __always_inline unsigned int log2_bucket(long long value) {
  if (value < 0)
    return 0;
  if (value == 0)
    return 1;
  unsigned long long v = value;
  unsigned int r = 2;
  for (int shift = 32; shift > 0; shift >>= 1) {
    if (v >= (1ULL << shift)) {
      v >>= shift;
      r += shift;
    }
  }
  return r;
}

SEC("uprobe/trace")
int trace(struct args *ctx) {
  struct comm_key key = {};
  bpf_get_current_comm(key.comm, sizeof(key.comm));
  unsigned long long *count = bpf_map_lookup_elem(&counts, &key);
  if (count) {
    __sync_fetch_and_add(count, 1);
  } else {
    unsigned long long one = 1;
    bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
  }

  unsigned int zero = 0;
  unsigned long long *buckets = bpf_map_lookup_elem(&hist, &zero);
  if (buckets) {
    unsigned int b = log2_bucket((long long)ctx->arg[1]);
    if (b < 66)
      buckets[b] += 1;
  }

  struct printf_event ev = {};
  ev.format_id = 1;
  ev.pid = bpf_get_current_pid_tgid() >> 32;
  bpf_probe_read_user_str(ev.str, sizeof(ev.str), (void *)ctx->arg[0]);
  bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);

  // comm == "vm_test"?
  const char want[] = "vm_test";
  int same = 1;
  for (int i = 0; i < (int)sizeof(want); i++) {
    if (key.comm[i] != want[i]) {
      same = 0;
      break;
    }
  }
  return same;
}

char LICENSE[] SEC("license") = "GPL";
