#include "runtime/maps/ring_buffer.h"

#include "runtime/maps/thread_slot.h"
#include "runtime/probe_safe.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

// A reservation gives up (the record is lost, and counted) after this many
// failed claims: each failure means another writer claimed the position,
// which real contention never keeps up this long, but a process writing
// over the ring's words could.
constexpr int kMaxClaimFailures = 1 << 16;

enum class Claim { Claimed, Full, Retry };

// Claims the record starting at `position` (a value of producer_pos read by
// the caller). Every unclaimed word holds kRecFree | its position >> 3, and a
// position is only ever a record start in its lap, so the swap below can only
// succeed if `position` is still unclaimed, i.e. still the producer position;
// a caller holding a stale position fails and retries. (A position so stale
// that the consumer has gone past it is checked for after the swap, and the
// word restored: the only way that swap could succeed is record data that
// happens to equal the free word.)
template <class G>
Claim claim(const G &g, RingHeader *ring, uint64_t position, uint64_t state,
            uint64_t total) {
  const uint64_t consumer = ring->consumer_pos.load(std::memory_order_acquire);
  if (consumer > position) {
    // Either `position` is stale, or the consumer skipped a record whose
    // writer died before publishing the position after it: publish it.
    uint64_t at = position;
    ring->producer_pos.compare_exchange_strong(at, consumer,
                                               std::memory_order_acq_rel);
    return Claim::Retry;
  }
  if (position + total - consumer > g.capacity)
    return Claim::Full;
  std::atomic<uint64_t> *header = ring_word(g, ring, position);
  uint64_t expected = ring_free_word(position);
  if (header->compare_exchange_strong(expected, state,
                                      std::memory_order_acq_rel)) {
    if (ring->consumer_pos.load(std::memory_order_acquire) > position) {
      uint64_t mine = state;
      header->compare_exchange_strong(mine, ring_free_word(position),
                                      std::memory_order_acq_rel);
      return Claim::Retry;
    }
    // Publish the new producer position; a helper may have done it already.
    uint64_t at = position;
    ring->producer_pos.compare_exchange_strong(at, position + total,
                                               std::memory_order_acq_rel);
    return Claim::Claimed;
  }
  // Another producer claimed this position. Help it publish the position
  // after its record, so a producer killed between its claim and its
  // publication stops nobody.
  if ((expected & kRecFree) == 0) {
    uint64_t at = position;
    if (ring->producer_pos.load(std::memory_order_acquire) == at)
      ring->producer_pos.compare_exchange_strong(
          at, position + record_total(expected), std::memory_order_acq_rel);
  }
  return Claim::Retry;
}

uint64_t probe_writer_bits(RingHeader *ring) {
  RegionHeader *region = region_of(ring);
  const uint32_t slot = thread_slot(region, ring->region_id);
  if (slot == kNoSlot)
    return uint64_t{kRecNoSlot} << kRecSlotShift;
  return (uint64_t{slot} << kRecSlotShift) |
         (uint64_t{thread_slot_generation() & 0x3fff} << kRecGenShift);
}

// The CLI's records name no slot (cli_identity.h: it holds none through
// glibc, and it is the consumer: it never leaves a record unsubmitted).
constexpr uint64_t kCliWriterBits = uint64_t{kRecNoSlot} << kRecSlotShift;

void wake_consumer(RingHeader *ring, uint64_t flags) {
  if (flags & kRbNoWakeup)
    return;
  // Paired with the consumer's seq_cst store of consumer_waiting and reload
  // of the head: either it sees this record, or this sees it waiting.
  const bool waiting =
      ring->consumer_waiting.load(std::memory_order_seq_cst) != 0;
  if (!(flags & kRbForceWakeup) &&
      !(waiting && ring->consumer_waiting.exchange(0) != 0))
    return;
  ring->wake_seq.fetch_add(1, std::memory_order_seq_cst);
  probe_safe::raw_syscall(SYS_futex, reinterpret_cast<long>(&ring->wake_seq),
                          FUTEX_WAKE, INT_MAX);
}

template <class G>
void *reserve(const G &g, RingHeader *ring, uint64_t owner, uint64_t size) {
  const uint64_t capacity = g.capacity;
  if (size > capacity - kRecordHeaderSize) {
    ring->lost.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  const uint64_t total = kRecordHeaderSize + ((size + 7) & ~uint64_t{7});
  for (int failures = 0; failures < kMaxClaimFailures; ++failures) {
    const uint64_t position =
        ring->producer_pos.load(std::memory_order_acquire);
    const uint64_t offset = position & (capacity - 1);
    Claim result;
    if (offset + total > capacity) {
      // Records never wrap: fill the end of the ring with padding (committed
      // at once) and claim again at the start.
      const uint64_t pad = capacity - offset;
      result = claim(g, ring, position, kRecPad | pad, pad);
      if (result == Claim::Claimed)
        continue;
    } else {
      result = claim(g, ring, position, kRecBusy | owner | size, total);
      if (result == Claim::Claimed) {
        std::atomic<uint64_t> *header = ring_word(g, ring, position);
        // Word 2: the distance back to the ring header, for submit().
        header[1].store(g.data_offset + offset, std::memory_order_relaxed);
        return header + 2;
      }
    }
    if (result == Claim::Full)
      break;
  }
  ring->lost.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

// Publishes a busy record at `header` that names `owner`, in `ring`.
void publish(RingHeader *ring, std::atomic<uint64_t> *header, uint64_t owner,
             uint64_t flags, bool discard) {
  uint64_t state = header->load(std::memory_order_acquire);
  if ((state & (kRecFree | kRecBusy)) != kRecBusy ||
      (state & kRecOwnerMask) != owner)
    return;
  const uint64_t done = (state & ~kRecBusy) | (discard ? kRecDiscard : 0);
  if (!header->compare_exchange_strong(state, done, std::memory_order_seq_cst))
    return;
  wake_consumer(ring, flags);
}

template <class G>
uint64_t query(const G &g, RingHeader *ring, uint64_t flags) {
  const uint64_t consumer = ring->consumer_pos.load(std::memory_order_acquire);
  const uint64_t producer = ring->producer_pos.load(std::memory_order_acquire);
  switch (flags) {
  case kRbAvailData:
    return producer > consumer ? producer - consumer : 0;
  case kRbRingSize:
    return g.capacity;
  case kRbConsPos:
    return consumer;
  case kRbProdPos:
    return producer;
  default:
    return 0;
  }
}

// bpf_ringbuf_output: reserve, copy, submit.
template <class Reserve, class Commit>
long output(const void *data, uint64_t size, uint64_t flags, Reserve reserve,
            Commit commit) {
  if (flags & ~(kRbNoWakeup | kRbForceWakeup))
    return -EINVAL;
  void *record = reserve();
  if (record == nullptr)
    return -EAGAIN;
  probe_safe::copy_bytes(record, data, size);
  commit(record);
  return 0;
}

RingHeader *ring_of(const TrustedMap &t) {
  return reinterpret_cast<RingHeader *>(t.header);
}

} // namespace

void init_ring(RingHeader &ring) {
  for (uint64_t position = 0; position < ring.capacity; position += 8)
    ring_word(&ring, position)
        ->store(ring_free_word(position), std::memory_order_relaxed);
}

void *ring_reserve(RingHeader *ring, uint64_t size) {
  return reserve(*ring, ring, probe_writer_bits(ring), size);
}

void ring_commit(void *data, uint64_t flags, bool discard) {
  auto *header = static_cast<std::atomic<uint64_t> *>(data) - 2;
  // If the consumer gave up on this record (ring_consumer.h), its space may
  // have been released and even claimed again by another writer: commit only
  // a busy header that names this thread, and trust its second word (the
  // way back to the ring) only then.
  uint64_t state = header->load(std::memory_order_acquire);
  if ((state & (kRecFree | kRecBusy)) != kRecBusy)
    return;
  auto *ring =
      reinterpret_cast<RingHeader *>(reinterpret_cast<char *>(header) -
                                     header[1].load(std::memory_order_relaxed));
  publish(ring, header, probe_writer_bits(ring), flags, discard);
}

long ring_output(RingHeader *ring, const void *data, uint64_t size,
                 uint64_t flags) {
  return output(
      data, size, flags, [&] { return ring_reserve(ring, size); },
      [&](void *record) { ring_commit(record, flags, /*discard=*/false); });
}

uint64_t ring_query(const RingHeader *ring, uint64_t flags) {
  return query(*ring, const_cast<RingHeader *>(ring), flags);
}

void *ring_reserve(const TrustedMap &ring, uint64_t size) {
  return reserve(ring, ring_of(ring), kCliWriterBits, size);
}

void ring_commit(const TrustedMap &ring, void *data, uint64_t flags,
                 bool discard) {
  // `data` is where reserve() put a record of this ring: the header 16
  // bytes before it, inside the ring's data, on an 8-byte boundary. The
  // header's second word (the way back) is not read: the ring is known.
  char *at = static_cast<char *>(data) - kRecordHeaderSize;
  char *start = ring.header + ring.data_offset;
  if (at < start || at + kRecordHeaderSize > start + ring.capacity ||
      (at - start) % 8 != 0) {
    ring.region->note(Anomaly::Ring);
    return;
  }
  publish(ring_of(ring), reinterpret_cast<std::atomic<uint64_t> *>(at),
          kCliWriterBits, flags, discard);
}

long ring_output(const TrustedMap &ring, const void *data, uint64_t size,
                 uint64_t flags) {
  return output(
      data, size, flags, [&] { return ring_reserve(ring, size); },
      [&](void *record) {
        ring_commit(ring, record, flags, /*discard=*/false);
      });
}

uint64_t ring_query(const TrustedMap &ring, uint64_t flags) {
  return query(ring, ring_of(ring), flags);
}

} // namespace ubtrace::runtime::maps
