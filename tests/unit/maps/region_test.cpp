// Region creation, attachment through a descriptor, and the checks attach()
// makes before trusting a region.
#include "runtime/maps/fd_passing.h"
#include "runtime/maps/format.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/spec_layout.h"
#include "tests/unit/maps/test_support.h"

#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

namespace ubtrace::runtime::maps {
namespace {

using test::lookup_u64;
using test::make_region;
using test::update_u64;

const std::vector<MapLayout> kThreeMaps = {
    {MapKind::Hash, 8, 8, 128},
    {MapKind::PerCpuArray, 0, 8, 1},
    {MapKind::PerCpuHash, 16, 24, 64},
};

TEST(MapsRegion, SecondMappingSeesTheSameMapsAtOtherAddresses) {
  Region created = make_region(kThreeMaps);
  auto attached = Region::attach(created.fd());
  ASSERT_TRUE(attached.ok()) << attached.error();
  EXPECT_NE(created.base(), attached->base());
  EXPECT_EQ(created.region_id(), attached->region_id());
  ASSERT_EQ(attached->map_count(), 3u);
  EXPECT_EQ(attached->fd(), -1);

  // Same offsets, different addresses.
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_NE(created.map(i), attached->map(i));
    EXPECT_EQ(static_cast<char *>(created.map(i)) -
                  static_cast<char *>(created.base()),
              static_cast<char *>(attached->map(i)) -
                  static_cast<char *>(attached->base()));
  }
  EXPECT_EQ(created.map(3), nullptr);

  ASSERT_EQ(update_u64(created.map(0), 42, 4242), 0);
  uint64_t *seen = lookup_u64(attached->map(0), 42);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(*seen, 4242u);
  *seen = 7; // written through the second mapping
  EXPECT_EQ(*lookup_u64(created.map(0), 42), 7u);
}

TEST(MapsRegion, MapInfoReflectsLayouts) {
  Region region = make_region(kThreeMaps, {.thread_slots = 8});
  MapInfo hash = map_info(region.map(0));
  EXPECT_EQ(hash.kind, MapKind::Hash);
  EXPECT_EQ(hash.key_size, 8u);
  EXPECT_EQ(hash.value_size, 8u);
  EXPECT_EQ(hash.max_entries, 128u);
  MapInfo array = map_info(region.map(1));
  EXPECT_EQ(array.kind, MapKind::PerCpuArray);
  EXPECT_EQ(array.key_size, 4u); // arrays are indexed by u32
  EXPECT_EQ(region.thread_slots(), 8u);
  EXPECT_EQ(region.thread_slots_used(), 0u); // nothing claimed a slot yet
}

TEST(MapsRegion, MemfdIsSealedAgainstResizing) {
  Region region = make_region(kThreeMaps);
  const int seals = fcntl(region.fd(), F_GET_SEALS);
  ASSERT_GE(seals, 0);
  EXPECT_TRUE(seals & F_SEAL_SHRINK);
  EXPECT_TRUE(seals & F_SEAL_GROW);
  EXPECT_NE(ftruncate(region.fd(), 4096), 0);
  struct stat st;
  ASSERT_EQ(fstat(region.fd(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), region.size());
  EXPECT_EQ(st.st_mode & 0777, 0600u) << std::oct << st.st_mode;
}

TEST(MapsRegion, RejectsImpossibleLayouts) {
  struct Case {
    std::vector<MapLayout> maps;
    RegionOptions options;
    const char *message;
  };
  const Case cases[] = {
      {{{MapKind::Hash, 8, 0, 16}}, {}, "value size is 0"},
      {{{MapKind::Hash, 8, 8, 0}}, {}, "max_entries is 0"},
      {{{MapKind::Hash, 0, 8, 16}}, {}, "needs a key size"},
      {{{MapKind::PerCpuHash, 8, 1u << 24, 1u << 30}}, {}, "size limit"},
      {{}, {.thread_slots = 8, .ring_bytes = 5000}, "power of two"},
      {{}, {.thread_slots = 0}, "thread slots"},
      {{}, {.thread_slots = kMaxThreadSlots + 1}, "thread slots"},
  };
  for (const Case &c : cases) {
    auto region = Region::create(c.maps, c.options);
    ASSERT_FALSE(region.ok()) << c.message;
    EXPECT_NE(region.error().find(c.message), std::string::npos)
        << region.error();
  }
}

// A copy of a region's bytes in a fresh memfd, damaged by `damage`.
int damaged_copy(const Region &region,
                 const std::function<void(char *base)> &damage) {
  const int fd = memfd_create("damaged", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, static_cast<off_t>(region.size())), 0);
  void *copy =
      mmap(nullptr, region.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  EXPECT_NE(copy, MAP_FAILED);
  std::memcpy(copy, region.base(), region.size());
  damage(static_cast<char *>(copy));
  munmap(copy, region.size());
  return fd;
}

TEST(MapsRegion, AttachChecksEveryOffsetBeforeTrustingIt) {
  Region region = make_region(kThreeMaps);
  auto map_header = [&](char *base, uint32_t i) {
    return reinterpret_cast<MapHeader *>(base +
                                         (static_cast<char *>(region.map(i)) -
                                          static_cast<char *>(region.base())));
  };
  struct Case {
    const char *what;
    std::function<void(char *)> damage;
  };
  const Case cases[] = {
      {"magic", [](char *b) { b[0] ^= 1; }},
      {"version",
       [](char *b) { reinterpret_cast<RegionHeader *>(b)->version = 99; }},
      {"map table",
       [](char *b) {
         reinterpret_cast<RegionHeader *>(b)->map_table_offset = 1ull << 40;
       }},
      {"values offset",
       [&](char *b) { map_header(b, 2)->values_offset += 64; }},
      {"max entries", [&](char *b) { map_header(b, 0)->max_entries *= 1000; }},
      {"kind", [&](char *b) { map_header(b, 1)->kind = MapKind(77); }},
      {"ring",
       [&](char *b) {
         reinterpret_cast<RingHeader *>(b +
                                        (static_cast<char *>(region.ring()) -
                                         static_cast<char *>(region.base())))
             ->capacity *= 2;
       }},
  };
  for (const Case &c : cases) {
    const int fd = damaged_copy(region, c.damage);
    auto attached = Region::attach(fd);
    EXPECT_FALSE(attached.ok()) << c.what;
    if (!attached.ok())
      EXPECT_NE(attached.error().find("not a valid region"), std::string::npos)
          << attached.error();
    close(fd);
  }
  // A ring that is one of the maps is checked too.
  Region with_ring = make_region({{MapKind::RingBuf, 0, 0, 4096}});
  const int ring_fd = damaged_copy(with_ring, [&](char *b) {
    reinterpret_cast<RingHeader *>(b + (static_cast<char *>(with_ring.map(0)) -
                                        static_cast<char *>(with_ring.base())))
        ->capacity = 1 << 20;
  });
  EXPECT_FALSE(Region::attach(ring_fd).ok());
  close(ring_fd);
  // The undamaged copy attaches.
  const int fd = damaged_copy(region, [](char *) {});
  EXPECT_TRUE(Region::attach(fd).ok());
  close(fd);
}

// Processes alike map the region where the first one did, so that they
// share one native code; never over something, nor where the main
// thread's stack may grow.
TEST(MapsRegion, AttachTakesTheAddressAskedForOnlyWhereItIsSafe) {
  Region created = make_region(kThreeMaps);
  uint64_t there = 0;
  {
    auto first = Region::attach(created.fd());
    ASSERT_TRUE(first.ok()) << first.error();
    there = reinterpret_cast<uint64_t>(first->base());
    // Occupied (by the first attach): anywhere else.
    auto second = Region::attach(created.fd(), there);
    ASSERT_TRUE(second.ok()) << second.error();
    EXPECT_NE(reinterpret_cast<uint64_t>(second->base()), there);
  }
  // Free again: taken.
  auto third = Region::attach(created.fd(), there);
  ASSERT_TRUE(third.ok()) << third.error();
  EXPECT_EQ(reinterpret_cast<uint64_t>(third->base()), there);
  // Just below the stack's top, where it grows: refused.
  int local = 0;
  uint64_t near_stack =
      (reinterpret_cast<uint64_t>(&local) - (64ull << 20)) & ~uint64_t(0xfff);
  auto fourth = Region::attach(created.fd(), near_stack);
  ASSERT_TRUE(fourth.ok()) << fourth.error();
  EXPECT_NE(reinterpret_cast<uint64_t>(fourth->base()), near_stack);
  // Not page-aligned: anywhere.
  auto fifth = Region::attach(created.fd(), there + 8);
  ASSERT_TRUE(fifth.ok()) << fifth.error();
  EXPECT_NE(reinterpret_cast<uint64_t>(fifth->base()), there + 8);
}

TEST(MapsRegion, AttachRejectsFilesThatAreNotRegions) {
  const int fd = memfd_create("empty", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto tiny = Region::attach(fd);
  EXPECT_FALSE(tiny.ok());
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  auto zeros = Region::attach(fd);
  ASSERT_FALSE(zeros.ok());
  EXPECT_NE(zeros.error().find("bad magic"), std::string::npos);
  close(fd);
  EXPECT_FALSE(Region::attach(-1).ok());
}

TEST(MapsRegion, DescriptorTravelsOverAUnixSocket) {
  Region region = make_region(kThreeMaps);
  ASSERT_EQ(update_u64(region.map(0), 1, 11), 0);
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  ASSERT_TRUE(send_fd(sockets[0], region.fd()).ok());
  auto received = receive_fd(sockets[1]);
  ASSERT_TRUE(received.ok()) << received.error();
  EXPECT_NE(*received, region.fd());
  EXPECT_EQ(fcntl(*received, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  {
    auto attached = Region::attach(*received);
    ASSERT_TRUE(attached.ok()) << attached.error();
    EXPECT_EQ(*lookup_u64(attached->map(0), 1), 11u);
  }
  close(*received);
  close(sockets[0]);
  auto closed = receive_fd(sockets[1]);
  EXPECT_FALSE(closed.ok());
  close(sockets[1]);
}

TEST(MapsRegion, RingBufMapIsTheRegionsRing) {
  Region region = make_region({{MapKind::Hash, 8, 8, 16},
                               {MapKind::RingBuf, 0, 0, 8192},
                               {MapKind::PerCpuArray, 0, 8, 1}});
  void *events = region.map(1);
  EXPECT_EQ(events, region.ring());
  EXPECT_EQ(kind_of(events), MapKind::RingBuf);
  EXPECT_EQ(kind_of(region.map(0)), MapKind::Hash);
  EXPECT_EQ(ubt_bpf_ringbuf_query(events, 1), 8192u); // BPF_RB_RING_SIZE
  EXPECT_EQ(reinterpret_cast<uintptr_t>(events) % 4096, 0u);

  // Map helpers refuse a ring; the CLI-side calls see an empty map.
  const uint64_t key = 1, value = 2;
  EXPECT_EQ(ubt_bpf_map_lookup_elem(events, &key), nullptr);
  EXPECT_EQ(ubt_bpf_map_update_elem(events, &key, &value, 0), -EINVAL);
  EXPECT_EQ(ubt_bpf_map_delete_elem(events, &key), -EINVAL);
  EXPECT_EQ(map_info(events).kind, MapKind::RingBuf);
  EXPECT_EQ(map_info(events).max_entries, 8192u);
  EXPECT_EQ(snapshot(events).entries, 0u);

  // Through a second mapping: the same ring, and full rings count drops.
  auto attached = Region::attach(region.fd());
  ASSERT_TRUE(attached.ok()) << attached.error();
  EXPECT_EQ(attached->ring(), attached->map(1));
  const std::string record(8000, 'e');
  EXPECT_EQ(
      ubt_bpf_ringbuf_output(attached->map(1), record.data(), record.size(), 0),
      0);
  EXPECT_EQ(
      ubt_bpf_ringbuf_output(attached->map(1), record.data(), record.size(), 0),
      -EAGAIN);
  EXPECT_EQ(map_counters(events).drops, 1u);
  // BPF_RB_AVAIL_DATA: the record, and the padding to the end of the ring
  // the refused record claimed before finding no room after it.
  EXPECT_EQ(ubt_bpf_ringbuf_query(events, 0), 8192u);

  auto bad = Region::create({{{MapKind::RingBuf, 0, 0, 10000}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("power of two"), std::string::npos);
}

TEST(MapsSpecLayout, ArraysTakeU32KeysAndErrorsNameTheMap) {
  MapSpec scalar;
  scalar.name = "@count";
  scalar.kind = MapKind::PerCpuArray;
  scalar.agg = AggKind::Count;
  scalar.key_size = 0;
  scalar.value_size = 8;
  scalar.max_entries = 1;
  MapSpec hist;
  hist.name = "@h";
  hist.kind = MapKind::PerCpuHash;
  hist.agg = AggKind::Hist;
  hist.key_size = 8;
  hist.value_size = hist_buckets(0) * 8;
  hist.max_entries = 4096;
  auto layouts = layouts_for({scalar, hist});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ((*layouts)[0].key_size, 4u);
  EXPECT_EQ((*layouts)[1].value_size, 528u);
  Region region = make_region(*layouts);
  EXPECT_EQ(map_info(region.map(1)).value_size, 528u);

  MapSpec events;
  events.name = "ubt_events";
  events.role = MapRole::Events;
  events.kind = MapKind::RingBuf;
  events.max_entries = 1 << 16;
  auto with_events = layouts_for({scalar, events});
  ASSERT_TRUE(with_events.ok()) << with_events.error();
  Region evented = make_region(*with_events);
  EXPECT_EQ(evented.ring(), evented.map(1));
  EXPECT_EQ(ubt_bpf_ringbuf_query(evented.map(1), 1), 1u << 16);

  MapSpec broken = hist;
  broken.name = "@broken";
  broken.max_entries = 0;
  auto failed = layouts_for({scalar, broken});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error(), "@broken: map region: max_entries is 0");
}

} // namespace
} // namespace ubtrace::runtime::maps
