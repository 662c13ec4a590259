// Hot-path costs of shared-memory maps: what a probe pays per event for
// `@[key] = count()` style updates (lookup + increment), on per-slot and
// plain hash maps, from 1 and 2 threads; plus an event ring write.
//
//   ninja -C build maps_bench && build/tests/unit/maps/maps_bench
#include "runtime/maps/helpers.h"
#include "runtime/maps/region.h"
#include "runtime/maps/ring_consumer.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>

namespace {

using namespace ubtrace::runtime;
using namespace ubtrace::runtime::maps;

enum MapIndex : uint32_t { kPerSlotHash, kPlainHash, kPerSlotArray };

Region &region() {
  static Region *shared = [] {
    const MapLayout maps[] = {{MapKind::PerCpuHash, 8, 8, 4096},
                              {MapKind::Hash, 8, 8, 4096},
                              {MapKind::PerCpuArray, 0, 8, 1}};
    auto created = Region::create(maps, {});
    if (!created) {
      std::fprintf(stderr, "%s\n", created.error().c_str());
      std::abort();
    }
    return new Region(std::move(created).value());
  }();
  return *shared;
}

// Fill the map so lookups probe a realistically populated table.
void populate(void *map) {
  for (uint64_t key = 1000; key < 3000; ++key) {
    const uint64_t zero = 0;
    ubt_bpf_map_update_elem(map, &key, &zero, 0);
  }
}

uint64_t *lookup_or_insert(void *map, uint64_t key) {
  if (auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key)))
    return value;
  const uint64_t zero = 0;
  ubt_bpf_map_update_elem(map, &key, &zero, 0);
  return static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
}

// @[tid] = count(): each thread its own key, plain increment of its slot.
void BM_PerSlotHash_OwnKey(benchmark::State &state) {
  void *map = region().map(kPerSlotHash);
  if (state.thread_index() == 0)
    populate(map);
  const uint64_t key = 10 + state.thread_index();
  lookup_or_insert(map, key);
  for (auto _ : state) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
    *value += 1;
  }
}
BENCHMARK(BM_PerSlotHash_OwnKey)->Threads(1)->Threads(2);

// @[comm] = count(): every thread the same key; slots keep them apart.
void BM_PerSlotHash_SharedKey(benchmark::State &state) {
  void *map = region().map(kPerSlotHash);
  const uint64_t key = 7;
  lookup_or_insert(map, key);
  for (auto _ : state) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
    *value += 1;
  }
}
BENCHMARK(BM_PerSlotHash_SharedKey)->Threads(1)->Threads(2);

// @ = count(): a 1-entry per-slot array.
void BM_PerSlotArray_Scalar(benchmark::State &state) {
  void *map = region().map(kPerSlotArray);
  const uint32_t zero = 0;
  for (auto _ : state) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &zero));
    *value += 1;
  }
}
BENCHMARK(BM_PerSlotArray_Scalar)->Threads(1)->Threads(2);

// A plain hash needs an atomic increment; with one shared key the line
// bounces between cores (what per-slot maps avoid).
void BM_PlainHash_AtomicSharedKey(benchmark::State &state) {
  void *map = region().map(kPlainHash);
  if (state.thread_index() == 0)
    populate(map);
  const uint64_t key = 7;
  lookup_or_insert(map, key);
  for (auto _ : state) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
    __atomic_fetch_add(value, 1, __ATOMIC_RELAXED);
  }
}
BENCHMARK(BM_PlainHash_AtomicSharedKey)->Threads(1)->Threads(2);

void BM_PlainHash_AtomicOwnKey(benchmark::State &state) {
  void *map = region().map(kPlainHash);
  const uint64_t key = 20 + state.thread_index();
  lookup_or_insert(map, key);
  for (auto _ : state) {
    auto *value = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
    __atomic_fetch_add(value, 1, __ATOMIC_RELAXED);
  }
}
BENCHMARK(BM_PlainHash_AtomicOwnKey)->Threads(1)->Threads(2);

// @start[tid] = nsecs: update of an existing key.
void BM_PlainHash_UpdateExisting(benchmark::State &state) {
  void *map = region().map(kPlainHash);
  const uint64_t key = 40 + state.thread_index();
  lookup_or_insert(map, key);
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    benchmark::DoNotOptimize(ubt_bpf_map_update_elem(map, &key, &value, 0));
  }
}
BENCHMARK(BM_PlainHash_UpdateExisting)->Threads(1)->Threads(2);

// @start[tid] = nsecs ... delete(@start[tid]): insert (lock) + delete.
void BM_PlainHash_InsertDelete(benchmark::State &state) {
  void *map = region().map(kPlainHash);
  const uint64_t key = 100000 + state.thread_index();
  uint64_t value = 0;
  for (auto _ : state) {
    ubt_bpf_map_update_elem(map, &key, &value, 0);
    ubt_bpf_map_delete_elem(map, &key);
  }
}
BENCHMARK(BM_PlainHash_InsertDelete)->Threads(1)->Threads(2);

// printf-sized event: ring output; the consumer drains inline every 64
// records (its cost is included, amortised).
void BM_RingOutput32(benchmark::State &state) {
  static RingConsumer consumer(region().ring());
  uint64_t payload[4] = {1, 2, 3, 4};
  uint64_t n = 0;
  for (auto _ : state) {
    ubt_bpf_ringbuf_output(region().ring(), payload, sizeof payload, 0);
    if (++n % 64 == 0)
      consumer.drain([](std::span<const uint8_t>) { return true; });
  }
  consumer.drain([](std::span<const uint8_t>) { return true; });
}
BENCHMARK(BM_RingOutput32);

} // namespace

BENCHMARK_MAIN();
