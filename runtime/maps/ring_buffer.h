// The event ring: many producers (threads of the traced process, and the CLI
// itself), one consumer (the CLI, ring_consumer.h). Variable-size records in
// a power-of-two byte ring, each behind a 16-byte header, in the order they
// were reserved; records of one thread are therefore consumed in the order
// that thread wrote them.
//
// Producers never block and never lock: a reservation is one compare-and-swap
// on the record's header word, so a record is claimed (and names its writer)
// in the same instant. A full ring drops the record and counts it (lost).
// A writer that dies between reserve and submit leaves a busy record that
// names its thread slot; the consumer sees that slot's holder is gone and
// skips the record (ring_consumer.h).
#pragma once

#include "runtime/maps/format.h"
#include "runtime/maps/trusted.h"

#include <cstdint>

namespace ubtrace::runtime::maps {

inline constexpr uint64_t kRbNoWakeup = 1;
inline constexpr uint64_t kRbForceWakeup = 2;
inline constexpr uint64_t kRbAvailData = 0;
inline constexpr uint64_t kRbRingSize = 1;
inline constexpr uint64_t kRbConsPos = 2;
inline constexpr uint64_t kRbProdPos = 3;

void init_ring(RingHeader &ring);

// Data area of a new record of `size` bytes, or nullptr (lost, counted).
void *ring_reserve(RingHeader *ring, uint64_t size);
// Publishes (or discards) a reserved record and wakes a sleeping consumer.
void ring_commit(void *data, uint64_t flags, bool discard);
long ring_output(RingHeader *ring, const void *data, uint64_t size,
                 uint64_t flags);
uint64_t ring_query(const RingHeader *ring, uint64_t flags);

// The same, by the CLI on a ring it trusts nothing of but its own copy of
// the geometry (trusted.h). Its records name no thread slot.
void *ring_reserve(const TrustedMap &ring, uint64_t size);
void ring_commit(const TrustedMap &ring, void *data, uint64_t flags,
                 bool discard);
long ring_output(const TrustedMap &ring, const void *data, uint64_t size,
                 uint64_t flags);
uint64_t ring_query(const TrustedMap &ring, uint64_t flags);

// Layout shared with the consumer. G: the RingHeader itself, or the CLI's
// TrustedMap of it (its capacity and data offset). Positions are multiples
// of 8; one read from a word written over may not be, and must still name
// a whole word inside the data.
template <class G>
std::atomic<uint64_t> *ring_word(const G &g, const RingHeader *ring,
                                 uint64_t position) {
  return at_offset<std::atomic<uint64_t>>(
      ring, g.data_offset + (position & (g.capacity - 1) & ~uint64_t{7}));
}
inline std::atomic<uint64_t> *ring_word(const RingHeader *ring,
                                        uint64_t position) {
  return ring_word(*ring, ring, position);
}
// What an unclaimed word at `position` holds.
inline uint64_t ring_free_word(uint64_t position) {
  return kRecFree | (position >> 3);
}
inline uint64_t record_total(uint64_t state) {
  const uint64_t length = state & kRecLenMask;
  if (state & kRecPad)
    return length;
  return kRecordHeaderSize + ((length + 7) & ~uint64_t{7});
}

} // namespace ubtrace::runtime::maps
