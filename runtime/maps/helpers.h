// The BPF helpers of maps and the event ring, with the kernel's signatures,
// as plain C functions: the interpreter and JIT'd code call them directly.
// Every argument and result is a pointer or a 64-bit integer, passed in
// registers (x86-64 SysV), so a caller holding uint64_t values calls them
// correctly. `map` and `ringbuf` are handles: the address, in the calling
// process, of the map's or ring's header inside the region (Region::map(),
// Region::ring()).
//
// Named ubt_* rather than bpf_*: libbpf, linked into the CLI, exports
// bpf_map_lookup_elem & co. with its own (syscall) signatures.
#pragma once

#include <cstdint>

extern "C" {

// Value of the calling thread (its slot, for per-slot kinds), or NULL.
void *ubt_bpf_map_lookup_elem(void *map, const void *key);
// bpf_map_lookup_percpu_elem: the value of slot `cpu` of a per-slot map
// (slots are threads here, see thread_slot.h), or NULL, also for slots no
// thread ever claimed (abi::Globals::ncpus may count more slots than are in
// use).
void *ubt_bpf_map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu);
// flags: BPF_ANY (0), BPF_NOEXIST (1), BPF_EXIST (2). 0 or -errno: -EEXIST,
// -ENOENT, -E2BIG (full, or no thread slot for a per-slot map: the drop is
// counted), -EINVAL, -EBUSY (the insert lock was not obtained: a stopped
// holder, re-entry from a signal handler, or no thread slot; counted too).
long ubt_bpf_map_update_elem(void *map, const void *key, const void *value,
                             uint64_t flags);
// 0, -ENOENT, or -EINVAL for arrays.
long ubt_bpf_map_delete_elem(void *map, const void *key);

typedef long (*ubt_map_elem_callback)(void *map, void *key, void *value,
                                      void *context);
// Calls callback on each element (the calling thread's value) until it
// returns non-zero; returns the number of elements visited.
long ubt_map_iterate(void *map, ubt_map_elem_callback callback, void *context);
// bpf_for_each_map_elem: the above, with flags that must be 0.
long ubt_bpf_for_each_map_elem(void *map, void *callback, void *context,
                               uint64_t flags);

// Event ring (the handle of a RingBuf map, or Region::ring()). flags:
// BPF_RB_NO_WAKEUP (1), BPF_RB_FORCE_WAKEUP (2).
// output: 0 or -EAGAIN when the ring is full (the loss is counted).
long ubt_bpf_ringbuf_output(void *ringbuf, const void *data, uint64_t size,
                            uint64_t flags);
void *ubt_bpf_ringbuf_reserve(void *ringbuf, uint64_t size, uint64_t flags);
void ubt_bpf_ringbuf_submit(void *data, uint64_t flags);
void ubt_bpf_ringbuf_discard(void *data, uint64_t flags);
// BPF_RB_AVAIL_DATA (0), BPF_RB_RING_SIZE (1), BPF_RB_CONS_POS (2),
// BPF_RB_PROD_POS (3).
uint64_t ubt_bpf_ringbuf_query(void *ringbuf, uint64_t flags);

} // extern "C"

// The same helpers as the CLI runs them (BEGIN, END, interval and the other
// probes of its own interpreter) on a region the traced process can write
// over: the same operations on the CLI's trusted geometry, as the CLI
// (trusted.h, cli_identity.h). A handle that is no map of a trusted region
// of this process finds nothing and changes nothing.
namespace ubtrace::runtime::maps::cli {

void *map_lookup_elem(void *map, const void *key);
void *map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu);
long map_update_elem(void *map, const void *key, const void *value,
                     uint64_t flags);
long map_delete_elem(void *map, const void *key);
long map_iterate(void *map, ubt_map_elem_callback callback, void *context);
long ringbuf_output(void *ringbuf, const void *data, uint64_t size,
                    uint64_t flags);
void *ringbuf_reserve(void *ringbuf, uint64_t size, uint64_t flags);
void ringbuf_submit(void *data, uint64_t flags);
void ringbuf_discard(void *data, uint64_t flags);
uint64_t ringbuf_query(void *ringbuf, uint64_t flags);

} // namespace ubtrace::runtime::maps::cli
