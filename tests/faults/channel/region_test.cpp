// Defect 9, one piece at a time: the CLI's side of the maps region, with
// the region written over as a traced process could (this test plays both
// parts in one process: the writes below are the target's). The CLI must
// never read or write outside a map, never loop without bound, never hang
// on its own writes, never let the region steer glibc (a robust mutex it
// holds), and must say that the data was written over.
#include "runtime/maps/cli_identity.h"
#include "runtime/maps/format.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/region.h"
#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/ring_consumer.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <linux/futex.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

Region make(const std::vector<MapLayout> &maps, RegionOptions options = {}) {
  auto r = Region::create(maps, options);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(r).value();
}

uint64_t u64_at(std::span<const uint8_t> bytes, size_t i = 0) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + 8 * i, 8);
  return v;
}

// Runs `body` in a child with a deadline: a CLI call that never returns
// (the old ring producer's spin) fails the test instead of hanging it.
std::string in_child_within(int seconds, const std::function<int()> &body) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(static_cast<unsigned>(seconds));
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    return "exited " + std::to_string(WEXITSTATUS(status));
  return std::string("killed by ") + strsignal(WTERMSIG(status));
}

MapHeader *header(Region &r, uint32_t i) {
  return static_cast<MapHeader *>(r.map(i));
}

// A hash map with keys 1..4 = 10..40, written as the target's probes would.
struct HashFixture {
  Region region = make({{MapKind::Hash, 8, 8, 16}});
  void *map = region.map(0);
  HashFixture() {
    for (uint64_t k = 1; k <= 4; ++k) {
      uint64_t v = k * 10;
      EXPECT_EQ(ubt_bpf_map_update_elem(map, &k, &v, 0), 0);
    }
  }
  uint64_t sum_of_snapshot() {
    MapSnapshot snap = snapshot(map);
    uint64_t sum = 0;
    for (size_t i = 0; i < snap.entries; ++i)
      sum += u64_at(snap.value(i, 0));
    return sum;
  }
};

TEST(HostileRegion, BucketsNamingEntriesTheMapLacksAreSkipped) {
  HashFixture f;
  MapHeader *m = header(f.region, 0);
  auto *buckets = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(m) +
                                               m->buckets_offset);
  int forged = 0;
  for (uint32_t i = 0; i <= m->bucket_mask; ++i)
    if (buckets[i] == kBucketEmpty && forged++ < 8)
      buckets[i] = (uint64_t{0xdead} << 32) | (0xfffffff0u + forged);
  EXPECT_EQ(snapshot(f.map).entries, 4u);
  EXPECT_EQ(f.sum_of_snapshot(), 100u);
  uint64_t key = 3;
  std::vector<uint8_t> values;
  ASSERT_TRUE(read_entry(f.map, &key, values));
  EXPECT_EQ(u64_at(values), 30u);
  zero_map(f.map);
  clear_map(f.map);
  EXPECT_NE(f.region.trusted().anomaly_kinds.load() &
                static_cast<uint32_t>(Anomaly::Entry),
            0u);
}

TEST(HostileRegion, HeaderGeometryIsNeverReadBack) {
  HashFixture f;
  MapHeader *m = header(f.region, 0);
  const uint32_t key_size = m->key_size;
  m->bucket_mask = 0xffffffffu;
  m->key_size = 0x7fffffffu;
  m->value_size = 0x7fffffffu;
  m->max_entries = 0xffffffffu;
  m->buckets_offset = 1ull << 62;
  m->keys_offset = ~0ull;
  m->values_offset = 1ull << 40;
  m->slot_stride = ~0ull;
  auto *region = static_cast<RegionHeader *>(f.region.base());
  region->map_count = 0xffffffffu;
  region->map_table_offset = ~0ull;
  region->ring_offset = 12345;
  EXPECT_EQ(f.region.map_count(), 1u);
  EXPECT_EQ(f.region.map(0), f.map);
  EXPECT_EQ(map_info(f.map).key_size, key_size);
  EXPECT_EQ(map_info(f.map).max_entries, 16u);
  EXPECT_EQ(f.sum_of_snapshot(), 100u);
  // The CLI's own probes (BEGIN, END, interval) use the same geometry.
  uint64_t k = 9, v = 90;
  EXPECT_EQ(cli::map_update_elem(f.map, &k, &v, 0), 0);
  auto *found = static_cast<uint64_t *>(cli::map_lookup_elem(f.map, &k));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, 90u);
  EXPECT_EQ(cli::map_delete_elem(f.map, &k), 0);
  std::vector<std::string> changed = check_headers(f.region.trusted());
  EXPECT_EQ(changed, (std::vector<std::string>{"the region header", "map 0"}));
}

TEST(HostileRegion, CountersBeyondBeliefAreNotReported) {
  HashFixture f;
  MapHeader *m = header(f.region, 0);
  m->drops.store(~0ull);
  m->count.store(0xffffffffu);
  MapCounters c = map_counters(f.map);
  EXPECT_TRUE(c.overwritten);
  EXPECT_EQ(c.drops, 0u);
  EXPECT_EQ(c.entries, 16u);

  Region ringed = make({}, {.thread_slots = 8, .ring_bytes = 4096});
  RingConsumer consumer(ringed.ring());
  auto *ring = static_cast<RingHeader *>(ringed.ring());
  ring->lost.store(5);
  EXPECT_FALSE(consumer.stats().counters_overwritten);
  EXPECT_EQ(consumer.stats().lost, 5u);
  ring->lost.store(2); // backwards
  RingStats s = consumer.stats();
  EXPECT_TRUE(s.counters_overwritten);
  EXPECT_EQ(s.lost, 0u);
  Region other = make({}, {.thread_slots = 8, .ring_bytes = 4096});
  RingConsumer fresh(other.ring());
  static_cast<RingHeader *>(other.ring())->lost.store(~0ull);
  EXPECT_TRUE(fresh.stats().counters_overwritten);
}

std::vector<std::string> drain_all(RingConsumer &c) {
  std::vector<std::string> out;
  c.drain([&](std::span<const uint8_t> r) {
    out.emplace_back(r.begin(), r.end());
    return true;
  });
  return out;
}

TEST(HostileRegion, ConsumerKeepsItsOwnPosition) {
  Region r = make({}, {.thread_slots = 8, .ring_bytes = 4096});
  RingConsumer consumer(r.ring());
  auto *ring = static_cast<RingHeader *>(r.ring());
  for (const char *s : {"one", "two"})
    ASSERT_EQ(ubt_bpf_ringbuf_output(r.ring(), s, 3, 0), 0);
  EXPECT_EQ(drain_all(consumer), (std::vector<std::string>{"one", "two"}));
  ASSERT_EQ(ubt_bpf_ringbuf_output(r.ring(), "three", 5, 0), 0);
  ring->consumer_pos.store(0); // the tail runs backwards
  EXPECT_EQ(drain_all(consumer), (std::vector<std::string>{"three"}));
  ring->consumer_pos.store(1ull << 50); // and far ahead
  EXPECT_TRUE(drain_all(consumer).empty());
}

TEST(HostileRegion, ConsumerSkipsImpossibleRecordsBoundedly) {
  std::string result = in_child_within(20, [] {
    Region r = make({}, {.thread_slots = 8, .ring_bytes = 4096});
    RingConsumer consumer(r.ring());
    auto *ring = static_cast<RingHeader *>(r.ring());
    for (const char *s : {"aaaa", "bbbb", "cccc"})
      if (ubt_bpf_ringbuf_output(r.ring(), s, 4, 0) != 0)
        return 10;
    // The second record's header: a length past the ring, and a producer
    // position far beyond anything written.
    ring_word(ring, 24)->store(0x7ffffff0ull);
    ring->producer_pos.store(1ull << 40);
    std::vector<std::string> got = drain_all(consumer);
    if (got.empty() || got[0] != "aaaa")
      return 11;
    if (consumer.stats().corrupt == 0)
      return 12;
    // Four more laps of writing and reading still work.
    ring->producer_pos.store(ring->consumer_pos.load());
    for (int i = 0; i < 4 * 4096 / 24; ++i) {
      if (ubt_bpf_ringbuf_output(r.ring(), "dddd", 4, 0) != 0)
        return 13;
      if (drain_all(consumer) != std::vector<std::string>{"dddd"})
        return 14;
    }
    return 0;
  });
  EXPECT_EQ(result, "exited 0");
}

TEST(HostileRegion, CliRingWritesGiveUpInsteadOfSpinning) {
  std::string result = in_child_within(20, [] {
    Region r = make({}, {.thread_slots = 8, .ring_bytes = 4096});
    auto *ring = static_cast<RingHeader *>(r.ring());
    // Every word looks free, but for another position: no claim can ever
    // succeed (the old producer retried forever, ignoring SIGTERM).
    for (uint64_t at = 0; at < 4096; at += 8)
      ring_word(ring, at)->store(ring_free_word(at + 8));
    uint64_t lost = ring->lost.load();
    if (cli::ringbuf_output(r.ring(), "x", 1, 0) != -EAGAIN)
      return 10;
    if (cli::ringbuf_reserve(r.ring(), 8, 0) != nullptr)
      return 11;
    if (ring->lost.load() != lost + 2)
      return 12;
    // And the other way: the consumer ahead of every producer, nothing free.
    ring->consumer_pos.store(1ull << 40);
    for (uint64_t at = 0; at < 4096; at += 8)
      ring_word(ring, at)->store(0x1234);
    return cli::ringbuf_output(r.ring(), "x", 1, 0) == -EAGAIN ? 0 : 13;
  });
  EXPECT_EQ(result, "exited 0");
}

// A position read from a word written over need not be a multiple of 8:
// the words it names must still be whole words inside the ring's data. (The
// region's own ring ends where the region does: a guard page after it turns
// a word that spills over into a fault.)
TEST(HostileRegion, UnalignedRingPositionsStayInsideTheData) {
  const RegionOptions options{.thread_slots = 8, .ring_bytes = 4096};
  const uint64_t size = make({}, options).size();
  // Mappings go top-down into the highest gap that fits: free all but the
  // top page of a reservation, and the region lands right under that page.
  char *area = static_cast<char *>(mmap(nullptr, size + 8192, PROT_NONE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  char *guard = area + size + 4096;
  munmap(area, size + 4096);
  Region r = make({}, options);
  char *end = static_cast<char *>(r.base()) + r.size();
  auto *ring = static_cast<RingHeader *>(r.ring());
  ASSERT_EQ(reinterpret_cast<char *>(ring) + 4096 + 4096, end);
  if (end != guard) {
    munmap(guard, 4096);
    GTEST_SKIP() << "the region is not right under the guard page";
  }
  std::string result = in_child_within(20, [&] {
    const char *data = reinterpret_cast<const char *>(ring) + 4096;
    for (uint64_t position : {4095ull, 4093ull, (1ull << 40) + 4095}) {
      ring->consumer_pos.store(position & ~7ull);
      ring->producer_pos.store(position);
      for (uint64_t at = 0; at < 4096; at += 8) // free, as for a real lap
        ring_word(ring, at)->store(ring_free_word((position & ~4095ull) + at));
      auto *record = static_cast<char *>(cli::ringbuf_reserve(r.ring(), 8, 0));
      if (!record)
        continue; // lost (and counted): fine too
      if (reinterpret_cast<uintptr_t>(record) % 8 != 0 || record - 16 < data ||
          record + 8 > data + 4096)
        return 10;
      cli::ringbuf_discard(record, 0);
    }
    return 0;
  });
  munmap(guard, 4096);
  EXPECT_EQ(result, "exited 0");
}

// glibc links a robust mutex its thread holds into the thread's robust list
// through the mutex itself: a CLI thread holding one in the region would
// let the target steer glibc's list updates. The CLI's slot is held without
// glibc; target threads see it held and pass it by.
TEST(HostileRegion, CliHoldsNoRobustMutexInTheRegion) {
  Region r = make({{MapKind::PerCpuArray, 0, 8, 1}, {MapKind::Hash, 8, 8, 8}},
                  {.thread_slots = 4});
  const uint32_t zero = 0;
  const uint64_t one = 1;
  const uint64_t key = 7;
  std::string result = in_child_within(20, [&] {
    // A fresh thread, so nothing else it did is on its robust list.
    int rc = 1;
    std::thread([&] {
      if (cli::map_update_elem(r.map(0), &zero, &one, 0) != 0 ||
          cli::map_update_elem(r.map(1), &key, &one, 0) != 0) {
        rc = 2;
        return;
      }
      struct robust_list_head *head = nullptr;
      size_t len = 0;
      if (syscall(SYS_get_robust_list, 0, &head, &len) != 0) {
        rc = 3;
        return;
      }
      const char *base = static_cast<const char *>(r.base());
      const struct robust_list *entry = head->list.next;
      for (int n = 0; n < 64 && entry != &head->list; ++n) {
        const char *at = reinterpret_cast<const char *>(entry);
        if (at >= base && at < base + r.size()) {
          rc = 4;
          return;
        }
        entry = entry->next;
      }
      rc = 0;
    }).join();
    return rc;
  });
  EXPECT_EQ(result, "exited 0");
  // The CLI's writes are in its slot, which no target thread can take.
  TrustedRegion &t = r.trusted();
  std::string taken = in_child_within(20, [&] {
    if (cli::map_update_elem(r.map(0), &zero, &one, 0) != 0)
      return 2;
    const uint32_t mine = cli_slot(t);
    auto *slots = reinterpret_cast<ThreadSlot *>(static_cast<char *>(r.base()) +
                                                 t.slot_table_offset);
    if (mine == kNoSlot || slots[mine].owner.__data.__lock != kCliOwner)
      return 3;
    if (pthread_mutex_trylock(&slots[mine].owner) != EBUSY)
      return 4;
    int rc = 0;
    std::thread([&] { // a target thread claims a slot: never the CLI's
      auto *value =
          static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(r.map(0), &zero));
      if (!value || value == cli::map_lookup_elem(r.map(0), &zero))
        rc = 5;
    })
        .join();
    return rc;
  });
  EXPECT_EQ(taken, "exited 0");
}

TEST(HostileRegion, CliGivesUpOnAnInsertLockNobodyReleases) {
  Region r = make({{MapKind::Hash, 8, 8, 16}}, {.thread_slots = 4});
  MapHeader *m = header(r, 0);
  // The lock names slot 2 at its generation, and slot 2's mutex word says
  // held (by "thread 4242"): a holder that looks alive and never lets go.
  auto *slots = reinterpret_cast<ThreadSlot *>(static_cast<char *>(r.base()) +
                                               r.trusted().slot_table_offset);
  slots[2].owner.__data.__lock = 4242;
  const uint32_t generation = slots[2].generation.load() & 0x3fff;
  m->insert_lock.store((1u << 30) | 2u | (generation << 14));
  const uint64_t k1 = 1, k2 = 2, v = 1;
  EXPECT_EQ(cli::map_update_elem(r.map(0), &k1, &v, 0), -EBUSY);
  EXPECT_EQ(cli::map_update_elem(r.map(0), &k2, &v, 0), -EBUSY);
  EXPECT_EQ(m->lock_timeouts.load(), 1u) << "the second insert waited too";
  EXPECT_EQ(m->drops.load(), 2u);
  EXPECT_NE(cli_slot(r.trusted()), 2u);
}

TEST(HostileRegion, SlotMarkPastThePoolIsClamped) {
  Region r = make({{MapKind::PerCpuHash, 8, 8, 16}}, {.thread_slots = 4});
  const uint64_t k = 1, v = 5;
  ASSERT_EQ(ubt_bpf_map_update_elem(r.map(0), &k, &v, 0), 0);
  static_cast<RegionHeader *>(r.base())->slot_high_water.store(0xffffffffu);
  EXPECT_EQ(map_info(r.map(0)).slots, 4u);
  MapSnapshot snap = snapshot(r.map(0));
  ASSERT_EQ(snap.entries, 1u);
  EXPECT_EQ(snap.values.size(), 4u * 8);
  EXPECT_EQ(r.thread_slots_used(), 4u);
  EXPECT_NE(r.trusted().anomaly_kinds.load() &
                static_cast<uint32_t>(Anomaly::Slot),
            0u);
}

} // namespace
} // namespace ubtrace::runtime::maps
