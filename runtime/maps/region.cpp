#include "runtime/maps/region.h"

#include "runtime/maps/format.h"
#include "runtime/maps/hash_map.h"
#include "runtime/maps/region_registry.h"
#include "runtime/maps/ring_buffer.h"
#include "runtime/maps/thread_slot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" void *__libc_stack_end; // glibc: the main thread's stack top

namespace ubtrace::runtime::maps {
namespace {

Error system_error(const std::string &what) {
  return make_error("map region: " + what + ": " + std::strerror(errno));
}

uint64_t random_region_id() {
  uint64_t id = 0;
  while (id == 0)
    if (getrandom(&id, sizeof id, 0) != sizeof id)
      id = static_cast<uint64_t>(getpid()) << 32 ^
           reinterpret_cast<uintptr_t>(&id);
  return id;
}

Result<int> open_shared_file(uint64_t size) {
  int fd = memfd_create("ubtrace-maps", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  const bool memfd = fd >= 0;
  if (!memfd) {
    const std::string name = "/ubtrace-maps-" + std::to_string(getpid()) + "-" +
                             std::to_string(random_region_id());
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
      return system_error("memfd_create and shm_open failed");
    shm_unlink(name.c_str());
  }
  // Only holders of the descriptor need it; /proc/PID/fd/N reopens stay
  // owner-only too.
  fchmod(fd, 0600);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Error error = system_error("cannot size the shared file");
    close(fd);
    return error;
  }
  if (memfd)
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  return fd;
}

// Whether [at, at + size) stays clear of where the main thread's stack may
// grow: the kernel keeps max(RLIMIT_STACK, 128 MiB) below the stack's top
// for it, and a mapping there would make a deep recursion fault.
bool clear_of_stack(uint64_t at, uint64_t size) {
  struct rlimit lim{};
  if (getrlimit(RLIMIT_STACK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return false; // the legacy layout: no telling
  uint64_t top = reinterpret_cast<uint64_t>(__libc_stack_end);
  uint64_t room = std::max<uint64_t>(lim.rlim_cur, 128ull << 20) + (1ull << 30);
  return top > room && at + size <= top - room;
}

Result<void *> map_shared(int fd, uint64_t size, uint64_t wanted = 0) {
  if (wanted && wanted % 4096 == 0 && clear_of_stack(wanted, size)) {
    // Never over anything: NOREPLACE fails where something is mapped (a
    // kernel that does not know the flag takes it as a hint).
    void *at =
        mmap(reinterpret_cast<void *>(wanted), size, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (at == reinterpret_cast<void *>(wanted))
      return at;
    if (at != MAP_FAILED)
      munmap(at, size);
  }
  void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    return system_error("mmap");
  return base;
}

void init_map(char *base, uint64_t offset, uint32_t index,
              const MapLayout &layout, const MapPlacement &placement,
              uint64_t region_id) {
  auto *map = new (base + offset) MapHeader{};
  map->magic = kMapMagic;
  map->kind = layout.kind;
  map->key_size = is_hash(layout.kind) ? layout.key_size : 4;
  map->value_size = layout.value_size;
  map->max_entries = layout.max_entries;
  map->key_stride = placement.key_stride;
  map->value_stride = placement.value_stride;
  map->slot_count = placement.slot_count;
  map->bucket_mask = placement.bucket_count ? placement.bucket_count - 1 : 0;
  map->index = index;
  map->region_id = region_id;
  map->region_offset = offset;
  map->slot_stride = placement.slot_stride;
  map->buckets_offset = placement.buckets_offset;
  map->meta_offset = placement.meta_offset;
  map->keys_offset = placement.keys_offset;
  map->values_offset = placement.values_offset;
  map->total_size = placement.total_size;
  init_hash_map(*map);
}

void init_ring_at(char *base, uint64_t offset, uint32_t index,
                  uint64_t capacity, uint64_t region_id) {
  auto *ring = new (base + offset) RingHeader{};
  ring->magic = kRingMagic;
  ring->kind = MapKind::RingBuf;
  ring->index = index;
  ring->capacity = capacity;
  ring->data_offset = 4096;
  ring->region_id = region_id;
  ring->region_offset = offset;
  init_ring(*ring);
}

using Bad = std::function<Error(const std::string &)>;

Result<void> validate_ring(const char *base, uint64_t size, uint64_t offset,
                           uint32_t index, const RegionHeader &header,
                           const Bad &bad) {
  if (offset % 4096 != 0 || offset > size || size - offset < sizeof(RingHeader))
    return bad("ring outside the file");
  const auto *ring = reinterpret_cast<const RingHeader *>(base + offset);
  if (ring->magic != kRingMagic || ring->kind != MapKind::RingBuf ||
      ring->index != index || ring->region_offset != offset ||
      ring->region_id != header.region_id)
    return bad("ring header");
  auto placed =
      place_map({MapKind::RingBuf, 0, 0, static_cast<uint32_t>(ring->capacity)},
                header.thread_slots);
  if (!placed || ring->capacity > UINT32_MAX ||
      ring->data_offset != placed->values_offset ||
      size - offset < placed->total_size)
    return bad("ring size");
  return {};
}

Result<void> validate_map(const char *base, uint64_t size, uint64_t offset,
                          uint32_t index, const RegionHeader &header,
                          const Bad &bad) {
  const std::string name = "map " + std::to_string(index);
  if (offset % kCacheLine != 0 || offset > size ||
      size - offset < sizeof(MapHeader))
    return bad(name + " outside the file");
  const auto *map = reinterpret_cast<const MapHeader *>(base + offset);
  if (map->magic != kMapMagic || map->index != index ||
      map->region_offset != offset || map->region_id != header.region_id)
    return bad(name + " header");
  const MapLayout layout{map->kind, map->key_size, map->value_size,
                         map->max_entries};
  auto placed = place_map(layout, header.thread_slots);
  if (!placed)
    return bad(name + ": " + placed.error());
  const MapPlacement &p = *placed;
  const uint32_t mask = p.bucket_count ? p.bucket_count - 1 : 0;
  if (p.key_stride != map->key_stride || p.value_stride != map->value_stride ||
      p.slot_count != map->slot_count || mask != map->bucket_mask ||
      p.slot_stride != map->slot_stride ||
      p.buckets_offset != map->buckets_offset ||
      p.meta_offset != map->meta_offset || p.keys_offset != map->keys_offset ||
      p.values_offset != map->values_offset ||
      p.total_size != map->total_size || size - offset < p.total_size)
    return bad(name + " arrays");
  return {};
}

// Everything attach() trusts, checked against the file size and against a
// fresh placement of the same layout.
Result<void> validate(const char *base, uint64_t size) {
  const auto *header = reinterpret_cast<const RegionHeader *>(base);
  const Bad bad = [](const std::string &why) {
    return make_error("map region: not a valid region: " + why);
  };
  if (size < sizeof(RegionHeader) || header->magic != kRegionMagic)
    return bad("bad magic");
  if (header->version != kFormatVersion)
    return bad("format version " + std::to_string(header->version) +
               ", expected " + std::to_string(kFormatVersion));
  if (header->header_size != sizeof(RegionHeader) ||
      header->total_size != size || header->region_id == 0)
    return bad("header does not match the file");
  if (header->thread_slots == 0 || header->thread_slots > kMaxThreadSlots)
    return bad("thread slot count");
  auto inside = [size](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  if (!inside(header->map_table_offset,
              uint64_t{header->map_count} * sizeof(uint64_t)) ||
      !inside(header->slot_table_offset,
              uint64_t{header->thread_slots} * sizeof(ThreadSlot)))
    return bad("table outside the file");
  const auto *table =
      reinterpret_cast<const uint64_t *>(base + header->map_table_offset);
  bool ring_in_table = false;
  for (uint32_t i = 0; i < header->map_count; ++i) {
    const uint64_t offset = table[i];
    if (!inside(offset, sizeof(MapHeader)))
      return bad("map " + std::to_string(i) + " outside the file");
    // Untrusted bytes: compare the raw kind rather than switch over it.
    const auto kind = static_cast<uint8_t>(
        reinterpret_cast<const MapHeader *>(base + offset)->kind);
    if (kind > static_cast<uint8_t>(MapKind::RingBuf))
      return bad("map " + std::to_string(i) + " kind");
    const bool ring = kind == static_cast<uint8_t>(MapKind::RingBuf);
    ring_in_table |= ring && offset == header->ring_offset;
    auto valid = ring ? validate_ring(base, size, offset, i, *header, bad)
                      : validate_map(base, size, offset, i, *header, bad);
    if (!valid)
      return valid;
  }
  if (!ring_in_table) {
    auto valid = validate_ring(base, size, header->ring_offset, kImplicitRing,
                               *header, bad);
    if (!valid)
      return valid;
  }
  return {};
}

// What this process will trust from now on: the headers as they are now,
// which it just wrote (creation) or checked (attach).
std::unique_ptr<TrustedRegion> capture(char *base, uint64_t size) {
  auto t = std::make_unique<TrustedRegion>();
  const auto *header = reinterpret_cast<const RegionHeader *>(base);
  t->base = base;
  t->size = size;
  t->region_id = header->region_id;
  t->thread_slots = header->thread_slots;
  t->slot_table_offset = header->slot_table_offset;
  t->map_table_offset = header->map_table_offset;
  t->ring_offset = header->ring_offset;
  const auto *table =
      reinterpret_cast<const uint64_t *>(base + header->map_table_offset);
  auto take_ring = [&](uint64_t offset) {
    const auto *ring = reinterpret_cast<const RingHeader *>(base + offset);
    auto m = std::make_unique<TrustedMap>();
    m->kind = MapKind::RingBuf;
    m->index = ring->index;
    m->capacity = ring->capacity;
    m->data_offset = ring->data_offset;
    m->total_size = ring->data_offset + ring->capacity;
    m->region_offset = offset;
    m->header = base + offset;
    m->region = t.get();
    return m;
  };
  bool ring_in_table = false;
  for (uint32_t i = 0; i < header->map_count; ++i) {
    const uint64_t offset = table[i];
    const auto *map = reinterpret_cast<const MapHeader *>(base + offset);
    if (map->kind == MapKind::RingBuf) {
      t->maps.push_back(take_ring(offset));
      ring_in_table |= offset == header->ring_offset;
      continue;
    }
    auto m = std::make_unique<TrustedMap>();
    m->kind = map->kind;
    m->index = map->index;
    m->key_size = map->key_size;
    m->value_size = map->value_size;
    m->max_entries = map->max_entries;
    m->key_stride = map->key_stride;
    m->value_stride = map->value_stride;
    m->slot_count = map->slot_count;
    m->bucket_mask = map->bucket_mask;
    m->slot_stride = map->slot_stride;
    m->buckets_offset = map->buckets_offset;
    m->meta_offset = map->meta_offset;
    m->keys_offset = map->keys_offset;
    m->values_offset = map->values_offset;
    m->total_size = map->total_size;
    m->region_offset = offset;
    m->header = base + offset;
    m->region = t.get();
    t->maps.push_back(std::move(m));
  }
  if (!ring_in_table)
    t->implicit_ring = take_ring(header->ring_offset);
  register_trusted(t.get());
  return t;
}

} // namespace

Result<Region> Region::create(std::span<const MapLayout> maps,
                              const RegionOptions &options) {
  prepare_thread_slots(); // before anything can claim a slot
  auto plan = plan_region(maps, options);
  if (!plan)
    return std::move(plan).take_error();
  auto fd = open_shared_file(plan->total_size);
  if (!fd)
    return std::move(fd).take_error();
  auto mapped = map_shared(*fd, plan->total_size);
  if (!mapped) {
    close(*fd);
    return std::move(mapped).take_error();
  }
  char *base = static_cast<char *>(*mapped);
  // Keep the Region's destructor in charge of cleanup from here on.
  if (!registry::add(base, plan->total_size)) {
    munmap(base, plan->total_size);
    close(*fd);
    return make_error("map region: too many regions mapped in this process");
  }
  Region region(base, plan->total_size, *fd);

  const uint64_t region_id = random_region_id();
  auto *header = new (base) RegionHeader{};
  header->magic = kRegionMagic;
  header->version = kFormatVersion;
  header->header_size = sizeof(RegionHeader);
  header->total_size = plan->total_size;
  header->region_id = region_id;
  header->map_count = static_cast<uint32_t>(maps.size());
  header->thread_slots = plan->thread_slots;
  header->map_table_offset = plan->map_table_offset;
  header->slot_table_offset = plan->slot_table_offset;
  header->ring_offset = plan->ring_offset;

  ThreadSlot *slots = maps::thread_slots(header);
  for (uint32_t s = 0; s < plan->thread_slots; ++s)
    if (!init_thread_slot(*new (&slots[s]) ThreadSlot{}))
      return make_error("map region: cannot set up a process-shared mutex");

  auto *table = reinterpret_cast<uint64_t *>(base + plan->map_table_offset);
  for (size_t i = 0; i < maps.size(); ++i) {
    const uint64_t offset = plan->map_offsets[i];
    const auto index = static_cast<uint32_t>(i);
    table[i] = offset;
    if (maps[i].kind == MapKind::RingBuf)
      init_ring_at(base, offset, index, maps[i].max_entries, region_id);
    else
      init_map(base, offset, index, maps[i], plan->maps[i], region_id);
  }
  if (plan->implicit_ring != 0)
    init_ring_at(base, plan->ring_offset, kImplicitRing, plan->implicit_ring,
                 region_id);
  region.trusted_ = capture(base, plan->total_size);
  return region;
}

Result<Region> Region::attach(int fd, uint64_t wanted) {
  prepare_thread_slots(); // before anything can claim a slot
  struct stat st;
  if (fstat(fd, &st) != 0)
    return system_error("fstat");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < sizeof(RegionHeader))
    return make_error("map region: file too small to be a region");
  auto mapped = map_shared(fd, size, wanted);
  if (!mapped)
    return std::move(mapped).take_error();
  auto valid = validate(static_cast<const char *>(*mapped), size);
  if (!valid) {
    munmap(*mapped, size);
    return std::move(valid).take_error();
  }
  if (!registry::add(*mapped, size)) {
    munmap(*mapped, size);
    return make_error("map region: too many regions mapped in this process");
  }
  Region region(*mapped, size, -1);
  region.trusted_ = capture(static_cast<char *>(*mapped), size);
  return region;
}

Region::Region(Region &&other) noexcept
    : base_(other.base_), size_(other.size_), fd_(other.fd_),
      trusted_(std::move(other.trusted_)) {
  other.base_ = nullptr;
  other.fd_ = -1;
}

Region &Region::operator=(Region &&other) noexcept {
  if (this != &other) {
    reset();
    base_ = other.base_;
    size_ = other.size_;
    fd_ = other.fd_;
    trusted_ = std::move(other.trusted_);
    other.base_ = nullptr;
    other.fd_ = -1;
  }
  return *this;
}

Region::~Region() {
  reset();
}

void Region::reset() {
  if (base_ != nullptr) {
    if (trusted_)
      release_thread_slot(trusted_->region_id);
    registry::orphan(base_);
  }
  if (trusted_)
    unregister_trusted(trusted_.get());
  trusted_.reset();
  if (fd_ >= 0)
    close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

uint64_t Region::region_id() const {
  return trusted_->region_id;
}

uint32_t Region::map_count() const {
  return static_cast<uint32_t>(trusted_->maps.size());
}

void *Region::map(uint32_t index) const {
  const TrustedMap *m = trusted_->map(index);
  return m ? m->header : nullptr;
}

void *Region::ring() const {
  return trusted_->ring()->header;
}

uint32_t Region::thread_slots() const {
  return trusted_->thread_slots;
}

uint32_t Region::thread_slots_used() const {
  return trusted_->slots_used(trusted_->thread_slots);
}

uint64_t Region::slot_exhausted() const {
  return region_counter(&RegionHeader::slot_exhausted);
}

uint64_t Region::slot_raw_children() const {
  return region_counter(&RegionHeader::slot_raw_children);
}

uint64_t
Region::region_counter(std::atomic<uint64_t> RegionHeader::*counter) const {
  const uint64_t value = (static_cast<const RegionHeader *>(base_)->*counter)
                             .load(std::memory_order_relaxed);
  if (trusted_->plausible_count(value))
    return value;
  trusted_->note(Anomaly::Counter);
  return 0;
}

} // namespace ubtrace::runtime::maps
