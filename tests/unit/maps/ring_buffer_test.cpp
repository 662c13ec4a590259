// The event ring within one process: record semantics, order, loss,
// wrap-around, wake-ups, and writers that never submit.
#include "runtime/maps/format.h"
#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/ring_consumer.h"
#include "tests/unit/maps/test_support.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>

namespace ubtrace::runtime::maps {
namespace {

using test::make_region;

std::string as_string(std::span<const uint8_t> data) {
  return std::string(data.begin(), data.end());
}

std::vector<std::string> drain_strings(RingConsumer &consumer) {
  std::vector<std::string> records;
  consumer.drain([&](std::span<const uint8_t> data) {
    records.push_back(as_string(data));
    return true;
  });
  return records;
}

class MapsRingTest : public ::testing::Test {
protected:
  Region region_ = make_region({}, {.thread_slots = 64, .ring_bytes = 4096});
  void *ring_ = region_.ring();
  RingConsumer consumer_{ring_};
};

TEST_F(MapsRingTest, OutputIsConsumedOnceWithItsBytes) {
  const std::string a = "hello", b = "world, a longer record";
  EXPECT_EQ(ubt_bpf_ringbuf_output(ring_, a.data(), a.size(), 0), 0);
  EXPECT_EQ(ubt_bpf_ringbuf_output(ring_, b.data(), b.size(), 0), 0);
  EXPECT_EQ(drain_strings(consumer_), (std::vector<std::string>{a, b}));
  EXPECT_TRUE(drain_strings(consumer_).empty());
  EXPECT_EQ(ubt_bpf_ringbuf_query(ring_, kRbAvailData), 0u);
  EXPECT_EQ(ubt_bpf_ringbuf_query(ring_, kRbRingSize), 4096u);
  EXPECT_EQ(ubt_bpf_ringbuf_query(ring_, kRbProdPos),
            ubt_bpf_ringbuf_query(ring_, kRbConsPos));
}

TEST_F(MapsRingTest, ReserveSubmitDiscard) {
  auto *first = static_cast<char *>(ubt_bpf_ringbuf_reserve(ring_, 5, 0));
  auto *second = static_cast<char *>(ubt_bpf_ringbuf_reserve(ring_, 3, 0));
  auto *third = static_cast<char *>(ubt_bpf_ringbuf_reserve(ring_, 0, 0));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 8, 0u);
  EXPECT_EQ(ubt_bpf_ringbuf_reserve(ring_, 8, 1), nullptr); // flags must be 0
  std::memcpy(first, "first", 5);
  std::memcpy(second, "two", 3);
  // Submitted out of order: delivered in reservation order, once the first
  // is in.
  ubt_bpf_ringbuf_submit(second, 0);
  EXPECT_TRUE(drain_strings(consumer_).empty());
  EXPECT_GT(ubt_bpf_ringbuf_query(ring_, kRbAvailData), 0u);
  ubt_bpf_ringbuf_discard(first, 0);
  ubt_bpf_ringbuf_submit(third, 0);
  EXPECT_EQ(drain_strings(consumer_), (std::vector<std::string>{"two", ""}));
}

TEST_F(MapsRingTest, FullRingDropsAndCountsWithoutBlocking) {
  const std::string record(100, 'x');
  int accepted = 0, refused = 0;
  for (int i = 0; i < 100; ++i) {
    const long rc =
        ubt_bpf_ringbuf_output(ring_, record.data(), record.size(), 0);
    ASSERT_TRUE(rc == 0 || rc == -EAGAIN) << rc;
    (rc == 0 ? accepted : refused) += 1;
  }
  // 4096 bytes hold 4096 / (16 + 104) records.
  EXPECT_EQ(accepted, 4096 / 120);
  EXPECT_EQ(consumer_.stats().lost, static_cast<uint64_t>(refused));
  EXPECT_EQ(ubt_bpf_ringbuf_reserve(ring_, 4096, 0), nullptr); // too big
  EXPECT_EQ(consumer_.stats().lost, static_cast<uint64_t>(refused) + 1);
  EXPECT_EQ(drain_strings(consumer_).size(), static_cast<size_t>(accepted));
  EXPECT_EQ(ubt_bpf_ringbuf_output(ring_, record.data(), record.size(), 0), 0);
  EXPECT_EQ(ubt_bpf_ringbuf_output(ring_, record.data(), record.size(), 7),
            -EINVAL);
}

TEST_F(MapsRingTest, RecordsOfAllSizesSurviveManyLaps) {
  uint64_t seed = 7;
  std::vector<std::string> expected;
  size_t consumed = 0;
  for (int i = 0; i < 20000; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    std::string record((seed >> 33) % 300, 'a' + i % 26);
    if (!record.empty())
      record[0] = static_cast<char>(i);
    if (ubt_bpf_ringbuf_output(ring_, record.data(), record.size(), 0) == 0) {
      expected.push_back(record);
    } else {
      // Full: consume and retry once; it must fit then.
      for (const std::string &got : drain_strings(consumer_))
        ASSERT_EQ(got, expected[consumed++]);
      ASSERT_EQ(ubt_bpf_ringbuf_output(ring_, record.data(), record.size(), 0),
                0);
      expected.push_back(record);
    }
    if (seed >> 62 == 0)
      for (const std::string &got : drain_strings(consumer_))
        ASSERT_EQ(got, expected[consumed++]);
  }
  for (const std::string &got : drain_strings(consumer_))
    ASSERT_EQ(got, expected[consumed++]);
  EXPECT_EQ(consumed, expected.size());
  EXPECT_GT(ubt_bpf_ringbuf_query(ring_, kRbProdPos), 100u * 4096u);
}

struct Sequenced {
  uint32_t thread;
  uint32_t padding;
  uint64_t sequence;
};

// Producers race; each thread's records arrive in its order, and every
// record is either delivered or counted lost.
TEST(MapsRingBuffer, ManyProducersKeepPerThreadOrder) {
  Region region = make_region({}, {.thread_slots = 64, .ring_bytes = 1 << 16});
  void *ring = region.ring();
  constexpr uint32_t kThreads = 6;
  constexpr uint64_t kRecords = 50000;
  std::atomic<uint32_t> running{kThreads};
  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < kThreads; ++t)
    producers.emplace_back([&, t] {
      for (uint64_t i = 0; i < kRecords; ++i) {
        if (i % 2 == 0) {
          Sequenced record{t, 0, i};
          ubt_bpf_ringbuf_output(ring, &record, sizeof record, 0);
        } else if (void *slot =
                       ubt_bpf_ringbuf_reserve(ring, sizeof(Sequenced), 0)) {
          *static_cast<Sequenced *>(slot) = {t, 0, i};
          ubt_bpf_ringbuf_submit(slot, 0);
        }
      }
      --running;
    });
  RingConsumer consumer(ring);
  std::vector<int64_t> last(kThreads, -1);
  uint64_t delivered = 0;
  bool ordered = true;
  auto take = [&](std::span<const uint8_t> data) {
    Sequenced record;
    EXPECT_EQ(data.size(), sizeof record);
    std::memcpy(&record, data.data(), sizeof record);
    ordered &= record.thread<kThreads &&static_cast<int64_t>(record.sequence)>
                   last[record.thread];
    last[record.thread] = static_cast<int64_t>(record.sequence);
    ++delivered;
    return true;
  };
  while (running > 0)
    consumer.poll(take, 10'000'000);
  for (auto &p : producers)
    p.join();
  consumer.drain(take);
  EXPECT_TRUE(ordered);
  EXPECT_EQ(delivered + consumer.stats().lost, kThreads * kRecords);
  EXPECT_GT(delivered, 0u);
}

TEST(MapsRingBuffer, SleepingConsumerIsWokenByAProducer) {
  Region region = make_region({});
  void *ring = region.ring();
  RingConsumer consumer(ring);
  // Nothing there: the wait ends by its timeout.
  EXPECT_FALSE(consumer.wait(1'000'000));
  std::atomic<bool> consumer_waiting{false};
  std::thread producer([&] {
    // Produce only once the consumer is asleep (or about to be).
    auto *header = static_cast<RingHeader *>(ring);
    while (header->consumer_waiting.load() == 0)
      std::this_thread::yield();
    consumer_waiting = true;
    const uint64_t value = 42;
    ubt_bpf_ringbuf_output(ring, &value, sizeof value, 0);
  });
  uint64_t got = 0;
  // A long timeout: returning at all before it means the wake-up worked,
  // and nothing here asserts on time.
  const size_t n = consumer.poll(
      [&](std::span<const uint8_t> data) {
        std::memcpy(&got, data.data(), 8);
        return true;
      },
      60'000'000'000ull);
  producer.join();
  EXPECT_TRUE(consumer_waiting);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(got, 42u);
  EXPECT_EQ(static_cast<RingHeader *>(ring)->consumer_waiting.load(), 0u);
}

TEST(MapsRingBuffer, NoWakeupFlagLeavesTheConsumerAsleep) {
  Region region = make_region({});
  void *ring = region.ring();
  auto *header = static_cast<RingHeader *>(ring);
  header->consumer_waiting.store(1);
  const uint32_t seq = header->wake_seq.load();
  const uint64_t value = 1;
  ubt_bpf_ringbuf_output(ring, &value, sizeof value, kRbNoWakeup);
  EXPECT_EQ(header->wake_seq.load(), seq);
  ubt_bpf_ringbuf_output(ring, &value, sizeof value, 0);
  EXPECT_EQ(header->wake_seq.load(), seq + 1);
  EXPECT_EQ(header->consumer_waiting.load(), 0u);
  ubt_bpf_ringbuf_output(ring, &value, sizeof value, kRbForceWakeup);
  EXPECT_EQ(header->wake_seq.load(), seq + 2);
}

// A live writer that reserves and never submits (a stopped thread) is
// abandoned after the configured time; the records behind it flow again, and
// its late submit is dropped.
TEST(MapsRingBuffer, ConsumerAbandonsALiveWriterThatNeverSubmits) {
  Region region = make_region({});
  void *ring = region.ring();
  RingConsumer consumer(ring, {.liveness_check_after_ns = 1'000'000,
                               .abandon_after_ns = 50'000'000});
  std::atomic<void *> stuck{nullptr};
  std::atomic<bool> let_go{false};
  std::thread writer([&] {
    void *record = ubt_bpf_ringbuf_reserve(ring, 8, 0);
    std::memcpy(record, "stuck!!", 8);
    stuck = record;
    while (!let_go)
      std::this_thread::yield();
    ubt_bpf_ringbuf_submit(record, 0); // too late: dropped
  });
  while (stuck == nullptr)
    std::this_thread::yield();
  const std::string after = "after";
  ASSERT_EQ(ubt_bpf_ringbuf_output(ring, after.data(), after.size(), 0), 0);
  std::vector<std::string> got;
  auto take = [&](std::span<const uint8_t> data) {
    got.push_back(as_string(data));
    return true;
  };
  while (got.empty())
    consumer.poll(take, 1'000'000'000);
  EXPECT_EQ(got, (std::vector<std::string>{"after"}));
  EXPECT_EQ(consumer.stats().abandoned, 1u);
  EXPECT_EQ(consumer.stats().dead_writer_skips, 0u);
  let_go = true;
  writer.join();
  consumer.drain(take);
  EXPECT_EQ(got.size(), 1u);
}

// A thread that reserved and exited without submitting is found gone
// through its released slot, long before the abandon timeout.
TEST(MapsRingBuffer, WriterThreadThatExitedIsSkipped) {
  Region region = make_region({});
  void *ring = region.ring();
  RingConsumer consumer(
      ring, {.liveness_check_after_ns = 0, .abandon_after_ns = UINT64_MAX});
  std::thread([&] {
    ASSERT_NE(ubt_bpf_ringbuf_reserve(ring, 16, 0), nullptr);
  }).join();
  const std::string after = "after";
  ASSERT_EQ(ubt_bpf_ringbuf_output(ring, after.data(), after.size(), 0), 0);
  std::vector<std::string> got;
  while (got.empty())
    consumer.poll(
        [&](std::span<const uint8_t> data) {
          got.push_back(as_string(data));
          return true;
        },
        1'000'000'000);
  EXPECT_EQ(got, (std::vector<std::string>{"after"}));
  EXPECT_EQ(consumer.stats().dead_writer_skips, 1u);
}

TEST(MapsRingBuffer, CallbackCanStopTheDrain) {
  Region region = make_region({});
  void *ring = region.ring();
  for (uint64_t i = 0; i < 5; ++i)
    ubt_bpf_ringbuf_output(ring, &i, sizeof i, 0);
  RingConsumer consumer(ring);
  std::vector<uint64_t> got;
  auto take_until_two = [&](std::span<const uint8_t> data) {
    uint64_t v;
    std::memcpy(&v, data.data(), 8);
    got.push_back(v);
    return v != 2;
  };
  EXPECT_EQ(consumer.drain(take_until_two), 3u);
  EXPECT_EQ(consumer.drain(take_until_two, 1), 1u);
  EXPECT_EQ(consumer.drain(take_until_two), 1u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

} // namespace
} // namespace ubtrace::runtime::maps
