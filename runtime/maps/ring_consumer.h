// The event ring's single consumer (the CLI). It reads records in ring
// order, hands each to a callback, and gives the space back. It sleeps on a
// futex in the region until a producer commits (producers make the wake-up
// system call only while the consumer sleeps).
//
// A busy record at the head (reserved, not yet submitted) stops the consumer,
// as it must to keep order. It is skipped when its writer is gone: the record
// names the writer's thread slot, and the slot's robust mutex says whether
// that thread lives (dead_writer_skips). A writer that lives but does not
// submit within abandon_after_ns (stopped by a signal or a debugger) is
// skipped too (abandoned); if it resumes, its submit fails and its record is
// dropped, but the bytes it still writes land in space the ring may have
// reused, so keep that timeout well above any plausible preemption.
//
// The traced process can write anything over the ring. The consumer trusts
// only the geometry it made (trusted.h): it keeps its own position (the
// shared one is written for producers, never read back), checks every
// record header against the capacity before reading a byte of the record,
// copies each record out of the region before the callback parses it (so
// nothing changes under the parser), skips what makes no sense to the next
// boundary it can be sure of (the end of the lap: records never cross it),
// consumes at most one lap per drain() (so a writer that never stops cannot
// keep it), judges writers' liveness by reading their slot's mutex word
// (cli_identity.h), and gives up on any compare-and-swap the other side
// keeps failing. Loss counters that run backwards or beyond belief are
// reported as overwritten, not printed.
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/trusted.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace ubtrace::runtime::maps {

struct RingStats {
  uint64_t lost = 0;              // producers found the ring full
  uint64_t dead_writer_skips = 0; // writers died before submitting
  uint64_t abandoned = 0;         // live writers too slow to submit
  uint64_t corrupt = 0;           // invalid headers skipped
  // The counters above were written over (they ran backwards, or counted
  // more than could have happened): they are 0 here, not to be believed.
  bool counters_overwritten = false;
};

struct RingConsumerOptions {
  uint64_t liveness_check_after_ns = 1'000'000; // busy head: check writer
  uint64_t abandon_after_ns = 5'000'000'000ull; // busy head, live writer
};

class RingConsumer {
public:
  // Return false to stop draining after this record (it is consumed).
  using RecordCallback = std::function<bool(std::span<const uint8_t>)>;

  // `ring`: a ring handle of a Region of this process (trusted_map()).
  explicit RingConsumer(void *ring, RingConsumerOptions options = {});

  // Consumes ready records, in order, at most one lap of the ring; returns
  // how many were delivered.
  size_t drain(const RecordCallback &callback, size_t max_records = SIZE_MAX);
  // Sleeps until a record may be ready or timeout_ns passes. True when the
  // head record is ready (or must be dealt with: a stuck writer).
  bool wait(uint64_t timeout_ns);
  // Drains; while nothing was delivered, waits and drains again until
  // timeout_ns has passed.
  size_t poll(const RecordCallback &callback, uint64_t timeout_ns);

  RingStats stats() const;

private:
  enum class Head { Empty, Busy, Ready };
  Head head() const;
  // A busy head: skip it if its writer is gone or too slow. True if skipped.
  bool resolve_busy(uint64_t position, uint64_t state);
  void release(uint64_t position, uint64_t total);
  // The loss counters, checked: believable and never going backwards.
  void sample_counters() const;

  TrustedMap *ring_ = nullptr; // null: not a ring of this process (inert)
  RingHeader *shared_ = nullptr;
  RingConsumerOptions options_;
  uint64_t position_ = 0; // ours; the shared consumer_pos is only written
  uint64_t busy_position_ = UINT64_MAX;
  uint64_t busy_state_ = 0;
  uint64_t busy_since_ns_ = 0;
  uint64_t corrupt_ = 0;
  std::vector<uint8_t> record_; // the record being delivered, copied out
  // Highest believable values seen (sample_counters()).
  mutable uint64_t seen_[3] = {0, 0, 0};
  mutable bool overwritten_ = false;
};

} // namespace ubtrace::runtime::maps
