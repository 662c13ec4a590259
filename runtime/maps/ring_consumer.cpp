#include "runtime/maps/ring_consumer.h"

#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/thread_slot.h"

#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// A busy head is re-examined at least this often while waiting.
constexpr uint64_t kBusyRecheckNs = 2'000'000;

} // namespace

RingConsumer::RingConsumer(void *ring, RingConsumerOptions options)
    : ring_(static_cast<RingHeader *>(ring)), options_(options) {}

RingConsumer::Head RingConsumer::head() const {
  const uint64_t position = ring_->consumer_pos.load(std::memory_order_relaxed);
  const uint64_t state =
      ring_word(ring_, position)->load(std::memory_order_seq_cst);
  if (state & kRecFree)
    return Head::Empty;
  return (state & kRecBusy) ? Head::Busy : Head::Ready;
}

void RingConsumer::release(uint64_t position, uint64_t total) {
  // Re-tag every word with the position it will have in the next lap: the
  // only value a producer's claim can swap (ring_buffer.cpp).
  const uint64_t capacity = ring_->capacity;
  for (uint64_t at = position; at < position + total; at += 8)
    ring_word(ring_, at)->store(ring_free_word(at + capacity),
                                std::memory_order_relaxed);
  const uint64_t next = position + total;
  ring_->consumer_pos.store(next, std::memory_order_release);
  // A writer that died between claiming and publishing the position after
  // its record leaves producer_pos behind: move it on.
  uint64_t producer = ring_->producer_pos.load(std::memory_order_acquire);
  while (producer < next && !ring_->producer_pos.compare_exchange_weak(
                                producer, next, std::memory_order_acq_rel))
    ;
}

bool RingConsumer::resolve_busy(uint64_t position, uint64_t state) {
  const uint64_t now = now_ns();
  if (busy_position_ != position || busy_state_ != state) {
    busy_position_ = position;
    busy_state_ = state;
    busy_since_ns_ = now;
    return false;
  }
  const uint64_t waited = now - busy_since_ns_;
  if (waited < options_.liveness_check_after_ns)
    return false;
  const uint32_t slot = (state >> kRecSlotShift) & 0x3fff;
  const uint32_t generation = (state >> kRecGenShift) & 0x3fff;
  const bool dead = slot != kRecNoSlot &&
                    !slot_holder_alive(region_of(ring_), slot, generation);
  if (!dead && waited < options_.abandon_after_ns)
    return false;
  // The writer's submit fails from now on (it swaps from its busy state).
  uint64_t expected = state;
  if (!ring_word(ring_, position)
           ->compare_exchange_strong(expected,
                                     (state & ~kRecBusy) | kRecDiscard,
                                     std::memory_order_acq_rel))
    return true; // submitted meanwhile: take it as it is now
  (dead ? ring_->dead_writer_skips : ring_->abandoned)
      .fetch_add(1, std::memory_order_relaxed);
  return true;
}

size_t RingConsumer::drain(const RecordCallback &callback, size_t max_records) {
  const uint64_t capacity = ring_->capacity;
  size_t delivered = 0;
  while (delivered < max_records) {
    const uint64_t position =
        ring_->consumer_pos.load(std::memory_order_relaxed);
    std::atomic<uint64_t> *header = ring_word(ring_, position);
    const uint64_t state = header->load(std::memory_order_acquire);
    if (state & kRecFree)
      break;
    if (state & kRecBusy) {
      if (resolve_busy(position, state))
        continue;
      break;
    }
    const uint64_t total = record_total(state);
    const uint64_t offset = position & (capacity - 1);
    if (total < 8 || total % 8 != 0 || offset + total > capacity) {
      // Not a header this code writes. Skip to the producer position, the
      // only other boundary known.
      ++corrupt_;
      const uint64_t producer =
          ring_->producer_pos.load(std::memory_order_acquire);
      release(position, producer > position ? producer - position : 8);
      continue;
    }
    bool more = true;
    if ((state & (kRecPad | kRecDiscard)) == 0) {
      const auto *data =
          reinterpret_cast<const uint8_t *>(header) + kRecordHeaderSize;
      const size_t length = state & kRecLenMask;
      ++delivered;
      more = callback(std::span<const uint8_t>(data, length));
    }
    release(position, total);
    if (!more)
      break;
  }
  return delivered;
}

bool RingConsumer::wait(uint64_t timeout_ns) {
  Head now = head();
  if (now == Head::Ready)
    return true;
  const uint32_t seq = ring_->wake_seq.load(std::memory_order_acquire);
  ring_->consumer_waiting.store(1, std::memory_order_seq_cst);
  now = head();
  if (now == Head::Ready) {
    ring_->consumer_waiting.store(0, std::memory_order_relaxed);
    return true;
  }
  // A busy head may never be submitted (dead writer): come back to check.
  if (now == Head::Busy && timeout_ns > kBusyRecheckNs)
    timeout_ns = kBusyRecheckNs;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000ull);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000ull);
  // Not FUTEX_PRIVATE: producers in other processes wake this.
  syscall(SYS_futex, &ring_->wake_seq, FUTEX_WAIT, seq, &ts, nullptr, 0);
  ring_->consumer_waiting.store(0, std::memory_order_relaxed);
  now = head();
  return now != Head::Empty;
}

size_t RingConsumer::poll(const RecordCallback &callback, uint64_t timeout_ns) {
  const uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const size_t delivered = drain(callback);
    const uint64_t now = now_ns();
    if (delivered > 0 || now >= deadline)
      return delivered;
    wait(deadline - now);
  }
}

RingStats RingConsumer::stats() const {
  RingStats stats;
  stats.lost = ring_->lost.load(std::memory_order_relaxed);
  stats.dead_writer_skips =
      ring_->dead_writer_skips.load(std::memory_order_relaxed);
  stats.abandoned = ring_->abandoned.load(std::memory_order_relaxed);
  stats.corrupt = corrupt_;
  return stats;
}

} // namespace ubtrace::runtime::maps
