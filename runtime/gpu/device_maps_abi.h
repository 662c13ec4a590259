/* Device-resident maps: the memory layout shared by the code that updates
 * them on the GPU (device_runtime.c, linked into every probe module by the
 * CLI's NVPTX target), the agent that allocates, clears and reads them back
 * (runtime/agent/gpu), and the CLI that plans them (device_maps.h). Plain C
 * so device_runtime.c can include it.
 *
 * Every device map is one allocation that starts with a 64-byte header of
 * u64 words. The probe module reaches it through the u64 table
 * UBT_GPU_MAP_TABLE (one entry per map of the bundle, 0 for maps that have
 * no device storage), whose initial values the agent writes into the probe
 * PTX before it rewrites modules, so no module needs a post-load step.
 *
 * Array (scalar aggregations, small arrays, the globals):
 *   header, then UBT_GPU_ARRAY_SLOTS (per-slot kinds) or 1 slot of
 *   max_entries values of value_stride bytes each. A thread updates the
 *   slot of its SM (%smid % slots), like a CPU its per-CPU slot: updates of
 *   one counter from the whole GPU then spread over many addresses.
 * Hash (keyed maps): open addressing with linear probing over `capacity`
 *   buckets (a power of two, at least twice max_entries):
 *   header (word 0: updates dropped because the map was full; word 1: the
 *   buckets keys have claimed, at most max_entries, so a probe sequence
 *   always ends at an empty bucket soon and a full map refuses a new key at
 *   once), u64 state[capacity], keys[capacity][key_stride],
 *   values[capacity][value_stride]. A state is EMPTY, BUSY (a thread is
 *   writing the key and initial value), or READY: bit 63 set, the key's hash
 *   in bits 0-61, and bit 62 (DELETED) once the entry is deleted. A deleted
 *   entry keeps its key and bucket, and an update of the same key revives
 *   it there (a probe that deletes and re-adds the same keys, like
 *   @start[blockIdx.x], claims no new bucket); no other key takes it.
 *   Entries are never moved.
 * Ring (the events ring buffer, printf & co.):
 *   header (head, tail, drops, capacity), then capacity bytes (a power of
 *   two). A record is one u64 header word (payload length | READY bit) at an
 *   8-byte-aligned position, then the payload, wrapping modulo capacity;
 *   the writer stores the header word last, after a fence. The agent copies
 *   records out between tail and head, zeroes what it consumed and then
 *   advances tail.
 */
#ifndef UBTRACE_RUNTIME_GPU_DEVICE_MAPS_ABI_H
#define UBTRACE_RUNTIME_GPU_DEVICE_MAPS_ABI_H

#define UBT_GPU_MAP_TABLE "__ubt_gpu_maps"

#define UBT_GPU_MAP_HEADER_BYTES 64u
#define UBT_GPU_MAP_DROPS_WORD 0   /* hash: updates dropped (map full) */
#define UBT_GPU_MAP_ENTRIES_WORD 1 /* hash: buckets claimed by keys */

/* Slots of per-slot arrays: %smid modulo this. */
#define UBT_GPU_ARRAY_SLOTS 128u

#define UBT_GPU_HASH_EMPTY 0ull
#define UBT_GPU_HASH_BUSY 1ull
#define UBT_GPU_HASH_READY (1ull << 63)
#define UBT_GPU_HASH_DELETED (1ull << 62)

#define UBT_GPU_RING_HEAD_WORD 0
#define UBT_GPU_RING_TAIL_WORD 1
#define UBT_GPU_RING_DROPS_WORD 2
#define UBT_GPU_RING_CAPACITY_WORD 3
#define UBT_GPU_RING_READY (1ull << 32)
#define UBT_GPU_RING_LENGTH_MASK 0xffffffffull

/* How a new hash entry's value starts (the update's value, or the identity
 * of a min/max aggregation so device atomics can fold into it). */
#define UBT_GPU_INIT_COPY 0
#define UBT_GPU_INIT_MIN_SIGNED 1
#define UBT_GPU_INIT_MIN_UNSIGNED 2
#define UBT_GPU_INIT_MAX_SIGNED 3

#endif /* UBTRACE_RUNTIME_GPU_DEVICE_MAPS_ABI_H */
