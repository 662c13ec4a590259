// Not loadable by ubtrace: a kconfig extern (no kernel to resolve it).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern const volatile unsigned int LINUX_KERNEL_VERSION __kconfig;

SEC("uprobe")
int uses_kconfig(void *ctx) { return LINUX_KERNEL_VERSION > 0x50000; }

char LICENSE[] SEC("license") = "GPL";
