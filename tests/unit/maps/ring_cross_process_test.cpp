// The event ring across processes: a child writes through its own mapping,
// the parent consumes; a child killed in the middle of a record does not
// wedge the parent.
#include "runtime/maps/format.h"
#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/ring_consumer.h"
#include "tests/unit/maps/test_support.h"

#include <csignal>
#include <string>
#include <thread>

namespace ubtrace::runtime::maps {
namespace {

using test::exited_ok;
using test::make_region;
using test::start_attached_child;
using test::start_child;

struct Sequenced {
  uint32_t thread;
  uint32_t pid;
  uint64_t sequence;
};

TEST(MapsRingCrossProcess, ParentConsumesAChildsRecordsInPerThreadOrder) {
  Region region = make_region({}, {.thread_slots = 16, .ring_bytes = 1 << 14});
  const int fd = region.fd();
  constexpr uint32_t kThreads = 3;
  constexpr uint64_t kRecords = 30000;
  const pid_t child = start_child([&]() -> int {
    auto mine = Region::attach(fd);
    if (!mine)
      return 10;
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (uint64_t i = 0; i < kRecords; ++i) {
          Sequenced record{t, static_cast<uint32_t>(getpid()), i};
          ubt_bpf_ringbuf_output(mine->ring(), &record, sizeof record, 0);
        }
      });
    for (auto &t : threads)
      t.join();
    return 0;
  });
  ASSERT_GT(child, 0);

  RingConsumer consumer(region.ring());
  std::vector<int64_t> last(kThreads, -1);
  uint64_t delivered = 0;
  bool ordered = true;
  auto take = [&](std::span<const uint8_t> data) {
    Sequenced record;
    std::memcpy(&record, data.data(), sizeof record);
    ordered &= record.pid == static_cast<uint32_t>(child) &&
               record.thread<kThreads &&static_cast<int64_t>(record.sequence)>
                   last[record.thread];
    last[record.thread] = static_cast<int64_t>(record.sequence);
    ++delivered;
    return true;
  };
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0)
    consumer.poll(take, 10'000'000);
  consumer.drain(take);
  ASSERT_TRUE(exited_ok(status)) << status;
  EXPECT_TRUE(ordered);
  EXPECT_EQ(delivered + consumer.stats().lost, kThreads * kRecords);
  EXPECT_GT(delivered, 0u);
  EXPECT_EQ(consumer.stats().dead_writer_skips, 0u);
}

// Polls until a record arrives; gives up (and fails) after a generous bound
// rather than hanging the test run.
std::vector<std::string> poll_until_one(RingConsumer &consumer) {
  std::vector<std::string> got;
  for (int round = 0; round < 600 && got.empty(); ++round)
    consumer.poll(
        [&](std::span<const uint8_t> data) {
          got.emplace_back(data.begin(), data.end());
          return true;
        },
        100'000'000);
  return got;
}

// Runs `stage` in a child attached to the region, waits for its signal on a
// pipe, then SIGKILLs it.
void kill_child_after(const Region &region,
                      const std::function<void(Region &)> &stage) {
  const pid_t child = start_attached_child(region, [&](Region &mine) {
    stage(mine);
    return 0;
  });
  ASSERT_GT(child, 0);
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST(MapsRingCrossProcess, WriterKilledBetweenReserveAndSubmitIsSkipped) {
  Region region = make_region({}, {.thread_slots = 16, .ring_bytes = 4096});
  kill_child_after(region, [](Region &mine) {
    auto *record =
        static_cast<char *>(ubt_bpf_ringbuf_reserve(mine.ring(), 64, 0));
    std::memcpy(record, "half-written", 12);
  });
  // The consumer's abandon timeout is out of reach: only seeing the writer
  // dead can get it past the record.
  RingConsumer consumer(region.ring(), {.liveness_check_after_ns = 1'000'000,
                                        .abandon_after_ns = UINT64_MAX});
  const std::string after = "after the dead one";
  ASSERT_EQ(
      ubt_bpf_ringbuf_output(region.ring(), after.data(), after.size(), 0), 0);
  EXPECT_EQ(poll_until_one(consumer), (std::vector<std::string>{after}));
  EXPECT_EQ(consumer.stats().dead_writer_skips, 1u);
  EXPECT_EQ(consumer.stats().abandoned, 0u);

  // The space came back: the whole ring fills and drains again.
  const std::string record(200, 'r');
  int accepted = 0;
  while (ubt_bpf_ringbuf_output(region.ring(), record.data(), record.size(),
                                0) == 0)
    ++accepted;
  EXPECT_GE(accepted, 4096 / 216 - 1);
  EXPECT_EQ(consumer.drain([](std::span<const uint8_t>) { return true; }),
            static_cast<size_t>(accepted));
}

// Killed even earlier: the record is claimed but the producer position after
// it was never published. Other producers publish it for the dead one.
TEST(MapsRingCrossProcess, WriterKilledBeforePublishingItsPositionIsHelped) {
  Region region = make_region({}, {.thread_slots = 16, .ring_bytes = 4096});
  kill_child_after(region, [](Region &mine) {
    auto *ring = static_cast<RingHeader *>(mine.ring());
    const uint64_t before = ring->producer_pos.load();
    ubt_bpf_ringbuf_reserve(ring, 24, 0);
    ring->producer_pos.store(before); // as if killed right after the claim
  });
  RingConsumer consumer(region.ring(), {.liveness_check_after_ns = 1'000'000,
                                        .abandon_after_ns = UINT64_MAX});
  const std::string after = "after";
  ASSERT_EQ(
      ubt_bpf_ringbuf_output(region.ring(), after.data(), after.size(), 0), 0);
  EXPECT_EQ(poll_until_one(consumer), (std::vector<std::string>{after}));
  EXPECT_EQ(consumer.stats().dead_writer_skips, 1u);
}

// Killed before publishing, and nobody else produced: the consumer skips the
// record and moves the producer position on itself.
TEST(MapsRingCrossProcess,
     ConsumerRepairsTheProducerPositionOfALoneDeadWriter) {
  Region region = make_region({}, {.thread_slots = 16, .ring_bytes = 4096});
  kill_child_after(region, [](Region &mine) {
    auto *ring = static_cast<RingHeader *>(mine.ring());
    const uint64_t before = ring->producer_pos.load();
    ubt_bpf_ringbuf_reserve(ring, 24, 0);
    ring->producer_pos.store(before);
  });
  RingConsumer consumer(region.ring(), {.liveness_check_after_ns = 0,
                                        .abandon_after_ns = UINT64_MAX});
  for (int round = 0; round < 100 && consumer.stats().dead_writer_skips == 0;
       ++round)
    consumer.poll([](std::span<const uint8_t>) { return true; }, 10'000'000);
  EXPECT_EQ(consumer.stats().dead_writer_skips, 1u);
  auto *ring = static_cast<RingHeader *>(region.ring());
  EXPECT_EQ(ring->producer_pos.load(), ring->consumer_pos.load());
  const std::string after = "after";
  ASSERT_EQ(ubt_bpf_ringbuf_output(ring, after.data(), after.size(), 0), 0);
  EXPECT_EQ(poll_until_one(consumer), (std::vector<std::string>{after}));
}

} // namespace
} // namespace ubtrace::runtime::maps
