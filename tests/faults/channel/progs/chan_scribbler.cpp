// A traced program that writes over its own mapping of ubtrace's maps
// region while its threads keep hitting probes: a buggy program overrunning
// into the mapping, or a hostile one that knows the format.
//
//   chan_scribbler MODE SEED ROUNDS [forever]
//     MODE random:  random bytes at random places of the region
//          crafted: values chosen to mislead: huge sizes and offsets in the
//                   headers, bucket words naming entries that do not exist,
//                   free lists that loop, ring positions that run backwards
//                   or far ahead, record headers with huge lengths, loss
//                   counters at 2^64-1, a slot high-water mark past the pool,
//                   the slot table and an insert lock held by nobody
//          mixed:   both
//          survivable: crafted, but only what this program's own probes
//                   survive (ring positions and records, counters, bucket
//                   words, free lists, slot marks, locks)
//     SEED, ROUNDS: one scribble per round, a millisecond apart
//     forever:      keep scribbling until killed (the SIGTERM test), and
//                   print "scribbling" after ROUNDS rounds
// Three threads call chan_hit(i) meanwhile. Prints "region <bytes>" once it
// found the region, "scribbled <rounds>" and exits 0.
#include "runtime/maps/format.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ubtrace::runtime::maps;

volatile unsigned long g_sum;
extern "C" __attribute__((noinline)) void chan_hit(unsigned long i) {
  g_sum += i;
}

namespace {

std::atomic<bool> g_stop{false};

bool find_region(char **base, size_t *size) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return false;
  char line[512];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "ubtrace-maps"))
      continue;
    unsigned long start, end;
    if (sscanf(line, "%lx-%lx", &start, &end) == 2) {
      *base = reinterpret_cast<char *>(start);
      *size = end - start;
      found = true;
      break;
    }
  }
  fclose(f);
  return found;
}

struct Scribbler {
  char *base;
  size_t size;
  std::mt19937_64 rng;
  uint64_t ring_ = 0; // where the ring was before anything was written

  uint64_t any() { return rng(); }
  uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
  template <class T> void put(uint64_t offset, T value) {
    if (offset + sizeof(T) <= size)
      std::memcpy(base + offset, &value, sizeof value);
  }
  const RegionHeader *region() const {
    return reinterpret_cast<const RegionHeader *>(base);
  }
  // Offsets as the region says they are now (maybe already scribbled).
  uint64_t map_offset(uint32_t i) {
    uint64_t table = region()->map_table_offset;
    uint64_t off = 0;
    if (table + 8ull * (i + 1) <= size)
      std::memcpy(&off, base + table + 8ull * i, 8);
    return off;
  }
  uint32_t maps() { return std::min<uint32_t>(region()->map_count, 64); }
  // A header this program can still read at `offset` (its own view may be
  // scribbled already).
  template <class T> const T *at(uint64_t offset) {
    return offset <= size && size - offset >= sizeof(T)
               ? reinterpret_cast<const T *>(base + offset)
               : nullptr;
  }

  uint64_t huge() {
    static const uint64_t kValues[] = {~0ull,
                                       1ull << 63,
                                       0xffffffffull,
                                       0x7fffffffull,
                                       1ull << 40,
                                       4096,
                                       0,
                                       1,
                                       8,
                                       0xfffffffffffff000ull};
    return kValues[below(sizeof kValues / sizeof kValues[0])];
  }

  void random_bytes() {
    uint64_t at = below(size);
    uint64_t n = 1 + below(below(4) == 0 ? 4096 : 64);
    for (uint64_t i = 0; i < n && at + i < size; ++i)
      base[at + i] = static_cast<char>(any());
  }

  // `survivable`: only what this program's own probes survive (no map or
  // ring geometry, no random bytes): it keeps running, and writing, until
  // it is told to stop.
  void crafted(bool survivable = false) {
    static const int kSurvivable[] = {2, 3, 4, 5, 6, 8, 10, 12};
    uint32_t nmaps = maps();
    uint64_t m = nmaps ? map_offset(static_cast<uint32_t>(below(nmaps))) : 0;
    uint64_t ring = ring_;
    int what = survivable ? kSurvivable[below(8)] : int(below(14));
    switch (what) {
    case 0: // the region header's sizes and offsets
      put<uint32_t>(offsetof(RegionHeader, map_count), uint32_t(huge()));
      put<uint32_t>(offsetof(RegionHeader, thread_slots), uint32_t(huge()));
      put<uint64_t>(offsetof(RegionHeader, map_table_offset), huge());
      put<uint64_t>(offsetof(RegionHeader, ring_offset), huge());
      break;
    case 1: // a map header's geometry
      put<uint32_t>(m + offsetof(MapHeader, key_size), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, value_size), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, max_entries), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, bucket_mask), uint32_t(huge()));
      put<uint64_t>(m + offsetof(MapHeader, buckets_offset), huge());
      put<uint64_t>(m + offsetof(MapHeader, keys_offset), huge());
      put<uint64_t>(m + offsetof(MapHeader, values_offset), huge());
      put<uint64_t>(m + offsetof(MapHeader, slot_stride), huge());
      break;
    case 2: { // live bucket words naming entries that do not exist
      const auto *h = at<MapHeader>(m);
      if (!h)
        break;
      uint64_t buckets = m + h->buckets_offset;
      for (int i = 0; i < 32; ++i)
        put<uint64_t>(buckets + 8 * below(64),
                      (any() & 0xffffffff00000000ull) | (huge() | 0x10));
      break;
    }
    case 3: // counters at their limits
      put<uint32_t>(m + offsetof(MapHeader, count), 0xffffffffu);
      put<uint64_t>(m + offsetof(MapHeader, drops), ~0ull);
      put<uint64_t>(m + offsetof(MapHeader, evictions), ~0ull);
      put<uint64_t>(ring + offsetof(RingHeader, lost), ~0ull);
      put<uint64_t>(ring + offsetof(RingHeader, dead_writer_skips), ~0ull);
      break;
    case 4: { // a free list that loops, and a bump past the end
      const auto *h = at<MapHeader>(m);
      if (!h)
        break;
      put<uint32_t>(m + offsetof(MapHeader, free_head), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, bump), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, lru_hand), uint32_t(huge()));
      put<uint32_t>(m + offsetof(MapHeader, pending_entry), uint32_t(huge()));
      put<uint32_t>(m + h->meta_offset, 0u); // entry 0 -> 0: a cycle
      put<uint32_t>(m + offsetof(MapHeader, free_head), 0u);
      break;
    }
    case 5: // the ring's tail runs backwards, its head far ahead
      put<uint64_t>(ring + offsetof(RingHeader, consumer_pos),
                    below(2) ? 0 : huge());
      put<uint64_t>(ring + offsetof(RingHeader, producer_pos), huge());
      break;
    case 6: { // record headers with huge lengths, busy forever, or free for
              // another lap
      const auto *r = at<RingHeader>(ring);
      uint64_t cap = r ? r->capacity : 0;
      if (!cap || cap > size)
        break;
      uint64_t at = ring + 4096 + (below(cap) & ~7ull);
      static const uint64_t kStates[] = {0xffffffffull,
                                         kRecPad | 0xfff8,
                                         kRecBusy | (5ull << kRecSlotShift) | 8,
                                         kRecFree | 12345,
                                         kRecPad | 3,
                                         0};
      put<uint64_t>(at, kStates[below(6)]);
      break;
    }
    case 7: // the ring's geometry
      put<uint64_t>(ring + offsetof(RingHeader, capacity), huge());
      put<uint64_t>(ring + offsetof(RingHeader, data_offset), huge());
      break;
    case 8: // the slot high-water mark past the pool
      put<uint32_t>(offsetof(RegionHeader, slot_high_water), uint32_t(huge()));
      break;
    case 9: { // the slot table: mutexes, generations, claims
      uint64_t slots = region()->slot_table_offset;
      uint64_t at = slots + sizeof(ThreadSlot) * below(8);
      for (int w = 0; w < 8; ++w)
        put<uint64_t>(at + 8 * w, any());
      break;
    }
    case 10: // an insert lock held by somebody who is not there
      put<uint32_t>(m + offsetof(MapHeader, insert_lock),
                    (1u << 30) | uint32_t(below(0x3fff)));
      break;
    case 11: // the map table points elsewhere
      put<uint64_t>(region()->map_table_offset + 8 * below(nmaps + 1), huge());
      break;
    case 12: // a ring record's length beyond the ring, committed
      if (const auto *r = at<RingHeader>(ring))
        put<uint64_t>(ring + 4096 + (r->consumer_pos.load() & 0xff8),
                      0x7ffffff0ull);
      break;
    default:
      random_bytes();
      break;
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 4)
    return 2;
  std::string mode = argv[1];
  uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  long rounds = std::atol(argv[3]);
  bool forever = argc > 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([t] {
      for (unsigned long i = 0; !g_stop.load(); ++i) {
        chan_hit(i * 3 + t);
        if (i % 64 == 0)
          usleep(100);
      }
    });
  char *base = nullptr;
  size_t size = 0;
  for (int tries = 0; tries < 100 && !find_region(&base, &size); ++tries)
    usleep(10000);
  if (!base) {
    printf("no region\n");
    g_stop = true;
    for (auto &t : threads)
      t.join();
    return 3;
  }
  printf("region %zu\n", size);
  Scribbler s{base, size, std::mt19937_64(seed)};
  s.ring_ = s.region()->ring_offset;
  long done = 0;
  usleep(50000); // let the probes fill the maps and the ring first
  // Crafted: first the region header's map count and ring offset, which the
  // program's own probes never read again (they would crash it first
  // otherwise), so the CLI always has something it must notice.
  if (mode != "random") {
    s.put<uint32_t>(offsetof(RegionHeader, map_count), 0xffffffffu);
    s.put<uint64_t>(offsetof(RegionHeader, ring_offset), ~0ull);
  }
  // A test that fails leaves no scribbler behind: it ends with ubtrace.
  const pid_t parent = getppid();
  for (; (forever && getppid() == parent) || done < rounds; ++done) {
    if (mode == "random" || (mode == "mixed" && s.below(2)))
      s.random_bytes();
    else
      s.crafted(mode == "survivable");
    if (forever && done == rounds)
      printf("scribbling\n"); // the SIGTERM test's cue
    usleep(1000);
  }
  g_stop = true;
  for (auto &t : threads)
    t.join();
  printf("scribbled %ld\n", done);
  return 0;
}
