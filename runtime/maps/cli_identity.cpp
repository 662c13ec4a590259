#include "runtime/maps/cli_identity.h"

#include <linux/futex.h>

namespace ubtrace::runtime::maps {
namespace {

ThreadSlot *slot_table(const TrustedRegion &region) {
  return reinterpret_cast<ThreadSlot *>(region.base + region.slot_table_offset);
}

// The futex word of the slot's mutex (glibc's pthread_mutex_t: __lock).
int *owner_word(ThreadSlot &slot) {
  return &slot.owner.__data.__lock;
}

void raise_high_water(TrustedRegion &region, uint32_t slot) {
  auto *header = reinterpret_cast<RegionHeader *>(region.base);
  uint32_t high = header->slot_high_water.load(std::memory_order_relaxed);
  // Bounded: the traced process may be rewriting the word.
  for (int tries = 0; tries < 64 && high < slot + 1; ++tries)
    if (header->slot_high_water.compare_exchange_weak(
            high, slot + 1, std::memory_order_seq_cst))
      return;
  if (high < slot + 1)
    region.note(Anomaly::GaveUp);
}

} // namespace

uint32_t cli_slot(TrustedRegion &region) {
  uint32_t slot = region.cli_slot.load(std::memory_order_acquire);
  if (slot != kNoSlot || region.cli_slot_tried.exchange(true))
    return slot;
  ThreadSlot *slots = slot_table(region);
  // Slots nobody marked claimed first, then any free one.
  for (int pass = 0; pass < 2 && slot == kNoSlot; ++pass)
    for (uint32_t s = 0; s < region.thread_slots; ++s) {
      if (pass == 0 && slots[s].claimed.load(std::memory_order_relaxed))
        continue;
      int free_word = 0;
      if (__atomic_compare_exchange_n(owner_word(slots[s]), &free_word,
                                      kCliOwner, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED)) {
        slot = s;
        break;
      }
    }
  if (slot == kNoSlot)
    return slot;
  const uint32_t generation =
      slots[slot].generation.fetch_add(1, std::memory_order_relaxed) + 1;
  slots[slot].claimed.store(1, std::memory_order_relaxed);
  raise_high_water(region, slot);
  region.cli_generation.store(generation, std::memory_order_relaxed);
  region.cli_slot.store(slot, std::memory_order_release);
  return slot;
}

uint32_t cli_slot_generation(TrustedRegion &region) {
  return region.cli_generation.load(std::memory_order_relaxed);
}

bool slot_holder_alive_readonly(TrustedRegion &region, uint32_t slot,
                                uint32_t generation_low14) {
  if (slot >= region.thread_slots)
    return false;
  ThreadSlot &s = slot_table(region)[slot];
  if ((s.generation.load(std::memory_order_acquire) & 0x3fff) !=
      generation_low14)
    return false; // taken over since
  const int word = __atomic_load_n(owner_word(s), __ATOMIC_ACQUIRE);
  return word != 0 && (word & FUTEX_OWNER_DIED) == 0;
}

} // namespace ubtrace::runtime::maps
