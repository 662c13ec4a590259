// Global data: a .rodata configuration the program reads as constants, .data
// with initial values, .bss counters updated atomically, and a string
// literal used by bpf_printk and bpf_snprintf.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "common.h"

const volatile unsigned long long scale = 7;
const volatile unsigned int shift = 3;
unsigned long long table[4] = {10, 20, 30, 40};
unsigned long long hits;
unsigned long long last;
unsigned int flags32;
unsigned long long swapped;
char message[32];

// returns table[arg[0] & 3] * scale >> shift; counts hits atomically.
SEC("uprobe/config")
int config(struct args *ctx) {
  __sync_fetch_and_add(&hits, 1);
  unsigned long long old = __sync_lock_test_and_set(&last, ctx->arg[0]);
  __sync_fetch_and_or(&flags32, 1u << (ctx->arg[0] & 31));
  __sync_val_compare_and_swap(&swapped, old, ctx->arg[0] + 1);
  table[ctx->arg[0] & 3] += 1;
  return (int)((table[ctx->arg[0] & 3] * scale) >> shift);
}

SEC("uprobe/print")
int print(struct args *ctx) {
  bpf_printk("value %d of %s", (int)ctx->arg[0], "print");
  unsigned long long data[2] = {ctx->arg[0], ctx->arg[1]};
  return bpf_snprintf(message, sizeof(message), "%d-%d", data, sizeof(data));
}

char LICENSE[] SEC("license") = "GPL";
