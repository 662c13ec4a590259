// The helpers through the interpreter's uniform signature, by helper id.
#include "runtime/maps/helper_table.h"
#include "runtime/maps/ring_consumer.h"
#include "tests/unit/maps/test_support.h"

#include <linux/bpf.h>
#include <map>
#include <string>

namespace ubtrace::runtime::maps {
namespace {

using test::make_region;

std::map<int32_t, UniformHelper> by_id() {
  std::map<int32_t, UniformHelper> helpers;
  for (const HelperEntry &entry : map_helpers()) {
    EXPECT_TRUE(helpers.emplace(entry.id, entry.fn).second) << entry.name;
    EXPECT_NE(entry.fn, nullptr) << entry.name;
  }
  return helpers;
}

uint64_t u64(const void *p) {
  return reinterpret_cast<uint64_t>(p);
}

TEST(MapsHelperTable, HelpersRunThroughTheUniformSignature) {
  auto helpers = by_id();
  ASSERT_EQ(helpers.size(), 9u);
  Region region = make_region({{MapKind::Hash, 8, 8, 16},
                               {MapKind::RingBuf, 0, 0, 4096},
                               {MapKind::PerCpuArray, 0, 8, 1}});
  const uint64_t map = u64(region.map(0)), ring = u64(region.map(1));
  const uint64_t key = 5, value = 55;
  auto call = [&](int32_t id, uint64_t a, uint64_t b = 0, uint64_t c = 0,
                  uint64_t d = 0) { return helpers.at(id)(a, b, c, d, 0); };

  EXPECT_EQ(call(BPF_FUNC_map_lookup_elem, map, u64(&key)), 0u);
  EXPECT_EQ(call(BPF_FUNC_map_update_elem, map, u64(&key), u64(&value), 0), 0u);
  EXPECT_EQ(static_cast<int64_t>(call(BPF_FUNC_map_update_elem, map, u64(&key),
                                      u64(&value), BPF_NOEXIST)),
            -EEXIST);
  const uint64_t found = call(BPF_FUNC_map_lookup_elem, map, u64(&key));
  ASSERT_NE(found, 0u);
  EXPECT_EQ(*reinterpret_cast<uint64_t *>(found), 55u);
  EXPECT_EQ(call(BPF_FUNC_map_delete_elem, map, u64(&key)), 0u);
  EXPECT_EQ(
      static_cast<int64_t>(call(BPF_FUNC_map_delete_elem, map, u64(&key))),
      -ENOENT);

  const uint32_t zero = 0;
  const uint64_t percpu = u64(region.map(2));
  ASSERT_NE(call(BPF_FUNC_map_lookup_elem, percpu, u64(&zero)), 0u);
  EXPECT_EQ(call(BPF_FUNC_map_lookup_elem, percpu, u64(&zero)),
            call(BPF_FUNC_map_lookup_percpu_elem, percpu, u64(&zero), 0));

  const std::string text = "event";
  EXPECT_EQ(
      call(BPF_FUNC_ringbuf_output, ring, u64(text.data()), text.size(), 0),
      0u);
  const uint64_t record = call(BPF_FUNC_ringbuf_reserve, ring, 3, 0);
  ASSERT_NE(record, 0u);
  std::memcpy(reinterpret_cast<void *>(record), "abc", 3);
  call(BPF_FUNC_ringbuf_submit, record, 0);
  const uint64_t dropped = call(BPF_FUNC_ringbuf_reserve, ring, 8, 0);
  call(BPF_FUNC_ringbuf_discard, dropped, 0);
  EXPECT_EQ(call(BPF_FUNC_ringbuf_query, ring, BPF_RB_RING_SIZE), 4096u);
  std::vector<std::string> got;
  RingConsumer(region.map(1)).drain([&](std::span<const uint8_t> data) {
    got.emplace_back(data.begin(), data.end());
    return true;
  });
  EXPECT_EQ(got, (std::vector<std::string>{"event", "abc"}));
}

TEST(MapsHelperTable, DirectValueAccessOnlyForPlainArrays) {
  Region region = make_region({{MapKind::Array, 0, 12, 4},
                               {MapKind::PerCpuArray, 0, 8, 1},
                               {MapKind::Hash, 8, 8, 4},
                               {MapKind::RingBuf, 0, 0, 4096}});
  auto *base = static_cast<char *>(array_value_base(region.map(0)));
  ASSERT_NE(base, nullptr);
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_EQ(ubt_bpf_map_lookup_elem(region.map(0), &i), base + i * 16);
  EXPECT_EQ(array_value_base(region.map(1)), nullptr);
  EXPECT_EQ(array_value_base(region.map(2)), nullptr);
  EXPECT_EQ(array_value_base(region.map(3)), nullptr);
}

} // namespace
} // namespace ubtrace::runtime::maps
