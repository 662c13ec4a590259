// Strings on the stack: a literal built in place, a user string read with
// probe_read_user_str, a bounded compare loop, the current comm, and an
// event struct copied into a ring buffer.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(int));
  __uint(value_size, sizeof(int));
} perf SEC(".maps");

static __always_inline int prefix_len(const char *a, const char *b, int n) {
  int i = 0;
  for (; i < n; i++)
    if (a[i] != b[i] || a[i] == 0)
      break;
  return i;
}

// arg[0] = pointer to a user string: returns the length of its common
// prefix with "hello world", and emits an event holding it.
SEC("uprobe/greet")
int greet(struct args *ctx) {
  char want[] = "hello world";
  // Zeroed: the helper, as the kernel's, leaves the bytes after the string
  // as they were, and all 32 go into the event (the interpreter's stack
  // starts zeroed, a JIT's native one does not).
  char got[32] = {};
  long n = bpf_probe_read_user_str(got, sizeof(got), (void *)ctx->arg[0]);
  if (n < 0)
    return -1;
  int same = prefix_len(want, got, sizeof(want));
  struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e)
    return -2;
  e->pid_tgid = bpf_get_current_pid_tgid();
  e->value = same;
  bpf_get_current_comm(e->comm, sizeof(e->comm));
  __builtin_memcpy(e->text, got, sizeof(e->text));
  bpf_ringbuf_submit(e, 0);
  return same;
}

// Builds an event on the stack and sends it with ringbuf_output and
// perf_event_output; arg[0] = value.
SEC("uprobe/emit")
int emit(struct args *ctx) {
  struct event e = {};
  e.value = ctx->arg[0];
  e.pid_tgid = bpf_get_current_pid_tgid();
  __builtin_memcpy(e.text, "stack text", 11);
  bpf_ringbuf_output(&events, &e, sizeof(e), 0);
  bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, &e, sizeof(e));
  return 0;
}

// Reserves and discards: the reference must be released on every path.
SEC("uprobe/maybe")
int maybe(struct args *ctx) {
  struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e)
    return 0;
  e->value = ctx->arg[0];
  if (ctx->arg[0] & 1)
    bpf_ringbuf_submit(e, 0);
  else
    bpf_ringbuf_discard(e, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
