#include "runtime/maps/ring_consumer.h"

#include "runtime/maps/cli_identity.h"
#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/shared_words.h"

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
// Compare-and-swap attempts on a shared word before giving up on it.
constexpr int kMaxCasFailures = 64;

} // namespace

RingConsumer::RingConsumer(void *ring, RingConsumerOptions options)
    : ring_(trusted_map(ring)), options_(options) {
  if (ring_ && ring_->kind != MapKind::RingBuf)
    ring_ = nullptr;
  if (!ring_)
    return;
  shared_ = reinterpret_cast<RingHeader *>(ring_->header);
  // Where consumption stands now (0 for a new ring); ours from here on.
  position_ = shared_->consumer_pos.load(std::memory_order_acquire) & ~7ull;
}

RingConsumer::Head RingConsumer::head() const {
  if (!ring_)
    return Head::Empty;
  const uint64_t state =
      ring_word(*ring_, shared_, position_)->load(std::memory_order_seq_cst);
  if (state & kRecFree)
    return Head::Empty;
  return (state & kRecBusy) ? Head::Busy : Head::Ready;
}

void RingConsumer::release(uint64_t position, uint64_t total) {
  // Re-tag every word with the position it will have in the next lap: the
  // only value a producer's claim can swap (ring_buffer.cpp).
  const uint64_t capacity = ring_->capacity;
  for (uint64_t at = position; at < position + total; at += 8)
    ring_word(*ring_, shared_, at)
        ->store(ring_free_word(at + capacity), std::memory_order_relaxed);
  const uint64_t next = position + total;
  position_ = next;
  shared_->consumer_pos.store(next, std::memory_order_release);
  // A writer that died between claiming and publishing the position after
  // its record leaves producer_pos behind: move it on.
  uint64_t producer = shared_->producer_pos.load(std::memory_order_acquire);
  for (int failures = 0; producer < next && failures < kMaxCasFailures;
       ++failures)
    if (shared_->producer_pos.compare_exchange_weak(producer, next,
                                                    std::memory_order_acq_rel))
      break;
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
  const bool dead = slot != kRecNoSlot && !slot_holder_alive_readonly(
                                              *ring_->region, slot, generation);
  if (!dead && waited < options_.abandon_after_ns)
    return false;
  // The writer's submit fails from now on (it swaps from its busy state).
  uint64_t expected = state;
  if (!ring_word(*ring_, shared_, position)
           ->compare_exchange_strong(expected,
                                     (state & ~kRecBusy) | kRecDiscard,
                                     std::memory_order_acq_rel))
    return true; // submitted meanwhile: take it as it is now
  (dead ? shared_->dead_writer_skips : shared_->abandoned)
      .fetch_add(1, std::memory_order_relaxed);
  return true;
}

size_t RingConsumer::drain(const RecordCallback &callback, size_t max_records) {
  if (!ring_)
    return 0;
  sample_counters();
  const uint64_t capacity = ring_->capacity;
  const uint64_t lap_end = position_ + capacity;
  size_t delivered = 0;
  while (delivered < max_records && position_ < lap_end) {
    const uint64_t position = position_;
    std::atomic<uint64_t> *header = ring_word(*ring_, shared_, position);
    const uint64_t state = header->load(std::memory_order_acquire);
    if (state == ring_free_word(position))
      break; // nothing more yet
    if (state & kRecFree) {
      // A free word for another position: written over. No producer can
      // claim here until it is right again.
      ring_->region->note(Anomaly::Ring);
      ++corrupt_;
      header->store(ring_free_word(position), std::memory_order_release);
      break;
    }
    if (state & kRecBusy) {
      if (resolve_busy(position, state))
        continue;
      break;
    }
    const uint64_t total = record_total(state);
    const uint64_t offset = position & (capacity - 1);
    if (total < 8 || total % 8 != 0 || total > capacity - offset) {
      // Not a header this code writes. Skip to the nearest boundary known:
      // the producer position if it is plausible, else the end of this lap
      // (records never cross it).
      ring_->region->note(Anomaly::Ring);
      ++corrupt_;
      uint64_t skip = capacity - offset;
      const uint64_t producer =
          shared_->producer_pos.load(std::memory_order_acquire);
      if (producer > position && producer - position < skip &&
          (producer - position) % 8 == 0)
        skip = producer - position;
      release(position, skip);
      continue;
    }
    bool more = true;
    if ((state & (kRecPad | kRecDiscard)) == 0) {
      const size_t length = state & kRecLenMask; // <= total - 16
      record_.resize(length);
      load_shared(record_.data(),
                  reinterpret_cast<const uint8_t *>(header) + kRecordHeaderSize,
                  length);
      ++delivered;
      more = callback(std::span<const uint8_t>(record_.data(), length));
    }
    release(position, total);
    if (!more)
      break;
  }
  return delivered;
}

bool RingConsumer::wait(uint64_t timeout_ns) {
  if (!ring_)
    return false;
  Head now = head();
  if (now == Head::Ready)
    return true;
  const uint32_t seq = shared_->wake_seq.load(std::memory_order_acquire);
  shared_->consumer_waiting.store(1, std::memory_order_seq_cst);
  now = head();
  if (now == Head::Ready) {
    shared_->consumer_waiting.store(0, std::memory_order_relaxed);
    return true;
  }
  // A busy head may never be submitted (dead writer): come back to check.
  if (now == Head::Busy && timeout_ns > kBusyRecheckNs)
    timeout_ns = kBusyRecheckNs;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000ull);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000ull);
  // Not FUTEX_PRIVATE: producers in other processes wake this.
  syscall(SYS_futex, &shared_->wake_seq, FUTEX_WAIT, seq, &ts, nullptr, 0);
  shared_->consumer_waiting.store(0, std::memory_order_relaxed);
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

void RingConsumer::sample_counters() const {
  if (!ring_ || overwritten_)
    return;
  const uint64_t now[3] = {
      shared_->lost.load(std::memory_order_relaxed),
      shared_->dead_writer_skips.load(std::memory_order_relaxed),
      shared_->abandoned.load(std::memory_order_relaxed)};
  for (int i = 0; i < 3; ++i) {
    if (now[i] < seen_[i] || !ring_->region->plausible_count(now[i])) {
      overwritten_ = true;
      ring_->region->note(Anomaly::Counter);
      return;
    }
    seen_[i] = now[i];
  }
}

RingStats RingConsumer::stats() const {
  RingStats stats;
  sample_counters();
  stats.corrupt = corrupt_;
  if (overwritten_) {
    stats.counters_overwritten = true;
    return stats;
  }
  stats.lost = seen_[0];
  stats.dead_writer_skips = seen_[1];
  stats.abandoned = seen_[2];
  return stats;
}

} // namespace ubtrace::runtime::maps
