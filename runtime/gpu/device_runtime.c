/* The device half of GPU probes: map operations, the events ring and the
 * aggregating atomics that probe code calls on the GPU. Plain C compiled
 * for nvptx64 by clang at build time (LLVM bitcode embedded in the CLI);
 * the CLI's NVPTX target links the functions a probe module uses into it,
 * where they are inlined with the map's sizes as constants. Layouts are
 * device_maps_abi.h's. Every function here returns errors the way the BPF
 * helpers do (negative errno) and never traps: a probe must not take the
 * kernel it runs in down with it.
 */
#include "runtime/gpu/device_maps_abi.h"

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef unsigned char u8;

#define INLINE static inline __attribute__((always_inline))
#define EXPORT __attribute__((visibility("default")))

enum {
  kEnoent = 2,
  kE2big = 7,
  kEagain = 11,
  kEfault = 14,
  kEexist = 17,
  kEinval = 22,
};

enum { kBpfAny = 0, kBpfNoExist = 1, kBpfExist = 2 };

/* A busy hash bucket is settled by a thread that is running (Volta and
 * later schedule threads independently); give up after a bound anyway. */
#define UBT_BUSY_SPINS (1u << 16)

INLINE void copy_bytes(u8 *dst, const u8 *src, u64 size) {
  if ((((u64)dst | (u64)src | size) & 7) == 0) {
    for (u64 i = 0; i < size; i += 8)
      *(u64 *)(dst + i) = *(const u64 *)(src + i);
    return;
  }
  for (u64 i = 0; i < size; i++)
    dst[i] = src[i];
}

INLINE int equal_bytes(const u8 *a, const u8 *b, u64 size) {
  if ((((u64)a | (u64)b | size) & 7) == 0) {
    for (u64 i = 0; i < size; i += 8)
      if (*(const u64 *)(a + i) != *(const u64 *)(b + i))
        return 0;
    return 1;
  }
  for (u64 i = 0; i < size; i++)
    if (a[i] != b[i])
      return 0;
  return 1;
}

INLINE u32 load_u32(const u8 *p) {
  u32 v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/* FNV-1a over the key, then a finaliser so the low bits (the bucket) mix
 * in every byte. */
INLINE u64 hash_key(const u8 *key, u64 size) {
  u64 h = 0xcbf29ce484222325ull;
  for (u64 i = 0; i < size; i++) {
    h ^= key[i];
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

INLINE u64 ready_word(u64 hash) {
  return UBT_GPU_HASH_READY | (hash >> 2);
}

INLINE u64 wait_settled(volatile u64 *state, u64 seen) {
  for (u32 spins = 0; seen == UBT_GPU_HASH_BUSY && spins < UBT_BUSY_SPINS;
       spins++) {
    __nvvm_nanosleep(64);
    seen = *state;
  }
  return seen;
}

INLINE u64 *header(u8 *base) {
  return (u64 *)base;
}

/* ---- arrays ---- */

EXPORT void *__ubt_array_lookup(u8 *base, const u8 *key, u64 max_entries,
                                u64 value_stride, u64 slot_stride, u64 slots) {
  u32 index = load_u32(key);
  if (base == 0 || index >= max_entries)
    return 0;
  u64 slot = slots > 1 ? __nvvm_read_ptx_sreg_smid() % slots : 0;
  return base + UBT_GPU_MAP_HEADER_BYTES + slot * slot_stride +
         index * value_stride;
}

/* bpf_map_lookup_percpu_elem: slot `cpu` (probes fold slots with it). */
EXPORT void *__ubt_array_lookup_slot(u8 *base, const u8 *key, u64 cpu,
                                     u64 max_entries, u64 value_stride,
                                     u64 slot_stride, u64 slots) {
  u32 index = load_u32(key);
  if (base == 0 || index >= max_entries || cpu >= slots)
    return 0;
  return base + UBT_GPU_MAP_HEADER_BYTES + cpu * slot_stride +
         index * value_stride;
}

EXPORT i64 __ubt_array_update(u8 *base, const u8 *key, const u8 *value,
                              u64 flags, u64 max_entries, u64 value_size,
                              u64 value_stride, u64 slot_stride, u64 slots) {
  if (flags > kBpfExist)
    return -kEinval;
  if (flags == kBpfNoExist)
    return -kEexist; /* array entries always exist */
  u8 *at = __ubt_array_lookup(base, key, max_entries, value_stride, slot_stride,
                              slots);
  if (at == 0)
    return -kE2big;
  copy_bytes(at, value, value_size);
  return 0;
}

/* ---- hashes ---- */

EXPORT void *__ubt_hash_lookup(u8 *base, const u8 *key, u64 key_size,
                               u64 key_stride, u64 value_stride, u64 capacity,
                               u64 values_offset) {
  if (base == 0)
    return 0;
  u64 h = hash_key(key, key_size);
  u64 tag = ready_word(h);
  volatile u64 *states = (volatile u64 *)(base + UBT_GPU_MAP_HEADER_BYTES);
  u8 *keys = base + UBT_GPU_MAP_HEADER_BYTES + capacity * 8;
  u8 *values = base + values_offset;
  u64 mask = capacity - 1;
  u64 i = h & mask;
  for (u64 n = 0; n < capacity; n++, i = (i + 1) & mask) {
    u64 s = wait_settled(&states[i], states[i]);
    if (s == UBT_GPU_HASH_EMPTY)
      return 0;
    if (s == tag && equal_bytes(keys + i * key_stride, key, key_size))
      return values + i * value_stride;
  }
  return 0;
}

INLINE void init_value(u8 *at, const u8 *value, u64 value_size, u64 init) {
  copy_bytes(at, value, value_size);
  switch (init) {
  case UBT_GPU_INIT_MIN_SIGNED:
    *(u64 *)at = 0x7fffffffffffffffull;
    break;
  case UBT_GPU_INIT_MIN_UNSIGNED:
    *(u64 *)at = ~0ull;
    break;
  case UBT_GPU_INIT_MAX_SIGNED:
    *(u64 *)at = 0x8000000000000000ull;
    break;
  default:
    break;
  }
}

INLINE i64 hash_full(u8 *base) {
  __nvvm_atom_add_gen_ll((i64 *)&header(base)[UBT_GPU_MAP_DROPS_WORD], 1);
  return -kE2big;
}

EXPORT i64 __ubt_hash_update(u8 *base, const u8 *key, const u8 *value,
                             u64 flags, u64 key_size, u64 value_size,
                             u64 key_stride, u64 value_stride, u64 capacity,
                             u64 values_offset, u64 init, u64 max_entries) {
  if (base == 0)
    return -kE2big;
  if (flags > kBpfExist)
    return -kEinval;
  u64 h = hash_key(key, key_size);
  u64 tag = ready_word(h);
  u64 deleted = tag | UBT_GPU_HASH_DELETED;
  volatile u64 *states = (volatile u64 *)(base + UBT_GPU_MAP_HEADER_BYTES);
  i64 *entries = (i64 *)&header(base)[UBT_GPU_MAP_ENTRIES_WORD];
  u8 *keys = base + UBT_GPU_MAP_HEADER_BYTES + capacity * 8;
  u8 *values = base + values_offset;
  u64 mask = capacity - 1;
  u64 i = h & mask;
  for (u64 n = 0; n < capacity; n++, i = (i + 1) & mask) {
    u64 s = states[i];
    if (s == UBT_GPU_HASH_EMPTY) {
      if (flags == kBpfExist)
        return -kEnoent;
      /* A new key: claim one of max_entries buckets first, so the table
       * stays at most half full. */
      if ((u64)__nvvm_atom_add_gen_ll(entries, 1) >= max_entries) {
        __nvvm_atom_add_gen_ll(entries, -1);
        return hash_full(base);
      }
      s = __nvvm_atom_cas_gen_ll((i64 *)&states[i], UBT_GPU_HASH_EMPTY,
                                 UBT_GPU_HASH_BUSY);
      if (s == UBT_GPU_HASH_EMPTY) {
        copy_bytes(keys + i * key_stride, key, key_size);
        init_value(values + i * value_stride, value, value_size, init);
        __nvvm_membar_gl();
        states[i] = tag;
        return 0;
      }
      __nvvm_atom_add_gen_ll(entries, -1); /* another thread took it */
    }
    s = wait_settled(&states[i], s);
    if ((s != tag && s != deleted) ||
        !equal_bytes(keys + i * key_stride, key, key_size))
      continue;
    if (s == tag) {
      if (flags == kBpfNoExist)
        return -kEexist;
      copy_bytes(values + i * value_stride, value, value_size);
      return 0;
    }
    /* Our key, deleted: revive it in its bucket. */
    if (flags == kBpfExist)
      return -kEnoent;
    s = __nvvm_atom_cas_gen_ll((i64 *)&states[i], deleted, UBT_GPU_HASH_BUSY);
    if (s == deleted) {
      init_value(values + i * value_stride, value, value_size, init);
      __nvvm_membar_gl();
      states[i] = tag;
      return 0;
    }
    /* Revived or deleted again by another thread meanwhile: look at this
     * bucket once more (the loop's step undone). */
    i = (i - 1) & mask;
    n--;
  }
  return hash_full(base);
}

EXPORT i64 __ubt_hash_delete(u8 *base, const u8 *key, u64 key_size,
                             u64 key_stride, u64 capacity) {
  if (base == 0)
    return -kEnoent;
  u64 h = hash_key(key, key_size);
  u64 tag = ready_word(h);
  volatile u64 *states = (volatile u64 *)(base + UBT_GPU_MAP_HEADER_BYTES);
  u8 *keys = base + UBT_GPU_MAP_HEADER_BYTES + capacity * 8;
  u64 mask = capacity - 1;
  u64 i = h & mask;
  for (u64 n = 0; n < capacity; n++, i = (i + 1) & mask) {
    u64 s = wait_settled(&states[i], states[i]);
    if (s == UBT_GPU_HASH_EMPTY)
      return -kEnoent;
    if (s == tag && equal_bytes(keys + i * key_stride, key, key_size)) {
      u64 was = __nvvm_atom_cas_gen_ll((i64 *)&states[i], tag,
                                       tag | UBT_GPU_HASH_DELETED);
      return was == tag ? 0 : -kEnoent;
    }
  }
  return -kEnoent;
}

/* ---- the events ring ---- */

EXPORT i64 __ubt_ring_output(u8 *ring, const u8 *data, u64 size, u64 capacity) {
  if (ring == 0)
    return -kEagain;
  volatile u64 *hdr = (volatile u64 *)ring;
  u64 total = 8 + ((size + 7) & ~7ull);
  if (size > UBT_GPU_RING_LENGTH_MASK || total > capacity)
    return -kE2big;
  u8 *bytes = ring + UBT_GPU_MAP_HEADER_BYTES;
  u64 mask = capacity - 1;
  for (u32 tries = 0; tries < 64; tries++) {
    u64 head = hdr[UBT_GPU_RING_HEAD_WORD];
    u64 tail = hdr[UBT_GPU_RING_TAIL_WORD];
    if (head + total - tail > capacity)
      break; /* full */
    u64 was = __nvvm_atom_cas_gen_ll((i64 *)&hdr[UBT_GPU_RING_HEAD_WORD], head,
                                     head + total);
    if (was != head)
      continue;
    for (u64 j = 0; j < size; j++)
      bytes[(head + 8 + j) & mask] = data[j];
    __nvvm_membar_gl();
    *(volatile u64 *)(bytes + (head & mask)) = size | UBT_GPU_RING_READY;
    return 0;
  }
  __nvvm_atom_add_gen_ll((i64 *)&hdr[UBT_GPU_RING_DROPS_WORD], 1);
  return -kEagain;
}

/* ---- reads through pointers (probe_read and probe_read_str) ----
 *
 * On the host these helpers are fault-safe. On a GPU nothing can catch a
 * fault: a load from an unmapped address ends the kernel with an illegal
 * address error and poisons the CUDA context. What can be checked is
 * checked, and a failed check behaves like a fault on the host (the
 * destination zeroed, -EFAULT):
 *   - null and anything in the first 64 KiB (a null struct pointer plus a
 *     field offset, a small integer taken for a pointer); nothing is mapped
 *     there on the host either (vm.mmap_min_addr) and no generic GPU
 *     address is that low;
 *   - a range that wraps around the address space.
 * Every other address is loaded from (generic addressing: global, shared,
 * local, constant, parameter space alike), never more than `size` bytes,
 * and a string read stops at its NUL. */
#define UBT_NULL_PAGE_BYTES (64ull << 10)

INLINE int readable(u64 src, u64 size) {
  return src >= UBT_NULL_PAGE_BYTES && src + size >= src;
}

INLINE void zero_bytes(u8 *dst, u64 size) {
  for (u64 i = 0; i < size; i++)
    dst[i] = 0;
}

EXPORT i64 __ubt_probe_read(u8 *dst, u64 size, const u8 *src) {
  if (!readable((u64)src, size)) {
    zero_bytes(dst, size);
    return -kEfault;
  }
  /* The widest loads the alignment of both sides allows (a misaligned
   * load is an error on a GPU, not a slow path). With the size a constant
   * after inlining, a scalar read is one load behind one alignment test. */
  u64 align = (u64)dst | (u64)src | size;
  if ((align & 7) == 0) {
    for (u64 i = 0; i < size; i += 8)
      *(u64 *)(dst + i) = *(const u64 *)(src + i);
  } else if ((align & 3) == 0) {
    for (u64 i = 0; i < size; i += 4)
      *(u32 *)(dst + i) = *(const u32 *)(src + i);
  } else if ((align & 1) == 0) {
    for (u64 i = 0; i < size; i += 2)
      *(unsigned short *)(dst + i) = *(const unsigned short *)(src + i);
  } else {
    for (u64 i = 0; i < size; i++)
      dst[i] = src[i];
  }
  return 0;
}

/* At most size - 1 bytes and a NUL; returns the bytes written with the NUL
 * (the kernel's bpf_probe_read_str). Bytes after the NUL are left alone. A
 * string is read a byte at a time: a wider load could run past the end of
 * an allocation, which a GPU does not survive. */
EXPORT i64 __ubt_probe_read_str(u8 *dst, u64 size, const u8 *src) {
  if (size == 0)
    return -kEinval;
  if (!readable((u64)src, 1)) {
    zero_bytes(dst, size);
    return -kEfault;
  }
  /* Never past the top of the address space. */
  u64 room = 0 - (u64)src; /* bytes up to 2^64; 0 means all of them */
  u64 limit = size - 1;
  if (room != 0 && room < limit)
    limit = room;
  u64 n = 0;
  for (; n < limit; n++) {
    u8 c = src[n];
    if (c == 0)
      break;
    dst[n] = c;
  }
  dst[n] = 0;
  return (i64)(n + 1);
}

/* ---- aggregating atomics ---- */

/* `*p += v` for a v every thread of the warp adds alike (count(), a hist
 * bucket's 1): the threads of a warp that update the same address elect
 * one, which adds v times their number. */
EXPORT void __ubt_atomic_add_uniform(u64 *p, u64 v) {
  u32 active = __nvvm_activemask();
  u32 peers = __nvvm_match_any_sync_i64(active, (i64)(u64)p);
  u32 lane = __nvvm_read_ptx_sreg_laneid();
  if (lane == (u32)__builtin_ctz(peers))
    __nvvm_atom_add_gen_ll((i64 *)p, (i64)(v * (u64)__builtin_popcount(peers)));
}

EXPORT void __ubt_atomic_add(u64 *p, u64 v) {
  __nvvm_atom_add_gen_ll((i64 *)p, (i64)v);
}

EXPORT void __ubt_atomic_min(u64 *p, u64 v, u64 is_signed) {
  if (is_signed)
    __nvvm_atom_min_gen_ll((i64 *)p, (i64)v);
  else
    __nvvm_atom_min_gen_ull(p, v);
}

EXPORT void __ubt_atomic_max(u64 *p, u64 v, u64 is_signed) {
  if (is_signed)
    __nvvm_atom_max_gen_ll((i64 *)p, (i64)v);
  else
    __nvvm_atom_max_gen_ull(p, v);
}
