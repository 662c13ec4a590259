// Not loadable by ubtrace: a map in the pre-BTF "maps" section.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct legacy_map_def {
  unsigned int type, key_size, value_size, max_entries, map_flags;
};

struct legacy_map_def counts SEC("maps") = {BPF_MAP_TYPE_HASH, 8, 8, 16, 0};

SEC("uprobe")
int legacy(void *ctx) {
  unsigned long long key = 0;
  return bpf_map_lookup_elem(&counts, &key) != 0;
}

char LICENSE[] SEC("license") = "GPL";
