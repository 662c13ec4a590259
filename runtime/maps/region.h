// A maps region: one shared-memory file holding every map of a bundle and the
// event ring. The CLI creates it from the map layouts; the traced process
// maps it through the file descriptor (inherited, or received over a unix
// socket: fd_passing.h) with attach(). Both then reach a map through its
// handle, map(i): the address of the map's header in their own mapping.
//
// Each side keeps what it made or checked (trusted.h) and answers map(),
// ring(), map_count() and thread_slots() from that, never from the region,
// which the other process can write over at any time.
#pragma once

#include "runtime/maps/layout.h"
#include "runtime/maps/trusted.h"
#include "runtime/result.h"

#include <cstdint>
#include <memory>
#include <span>

namespace ubtrace::runtime::maps {

class Region {
public:
  // A memfd (sealed against resizing, so no party can make another fault on
  // a truncated page), or an unlinked mode-0600 /dev/shm file where memfd is
  // missing. The descriptor is close-on-exec: hand it over explicitly.
  static Result<Region> create(std::span<const MapLayout> maps,
                               const RegionOptions &options = {});
  // Maps the region behind fd (which stays the caller's) after checking that
  // every header and offset in it is consistent and inside the file, so a
  // damaged region fails here instead of faulting in the traced process.
  // `wanted`: the address to map it at if nothing is there (else anywhere).
  static Result<Region> attach(int fd, uint64_t wanted = 0);

  Region(Region &&other) noexcept;
  Region &operator=(Region &&other) noexcept;
  Region(const Region &) = delete;
  Region &operator=(const Region &) = delete;
  // Releases the calling thread's thread slot and unmaps, or leaves the
  // unmapping to the last of this process's threads still holding a slot.
  ~Region();

  int fd() const { return fd_; } // the creator's descriptor; -1 if attached
  void *base() const { return base_; }
  uint64_t size() const { return size_; }
  uint64_t region_id() const;
  uint32_t map_count() const;
  // A map's handle; for a RingBuf map, its ring's handle.
  void *map(uint32_t index) const;
  // The first RingBuf map's ring, or, when the layouts have none, the
  // region's own ring (RegionOptions::ring_bytes).
  void *ring() const;
  uint32_t thread_slots() const;
  uint32_t thread_slots_used() const; // high-water mark (at most the pool)
  // Claims refused, no free slot (0, and an anomaly, if written over).
  uint64_t slot_exhausted() const;
  // Claims refused to children of a raw fork or clone (likewise).
  uint64_t slot_raw_children() const;
  // The geometry this process trusts, and the anomalies seen so far.
  TrustedRegion &trusted() const { return *trusted_; }

private:
  uint64_t region_counter(std::atomic<uint64_t> RegionHeader::*counter) const;
  Region(void *base, uint64_t size, int fd)
      : base_(base), size_(size), fd_(fd) {}
  void reset();

  void *base_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
  std::unique_ptr<TrustedRegion> trusted_;
};

} // namespace ubtrace::runtime::maps
