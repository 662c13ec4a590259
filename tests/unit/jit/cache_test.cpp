// The JIT cache: one compile per (program, maps, helpers), shared by every
// caller; another binding of the same program is another compile.
#include "runtime/jit/jit_cache.h"
#include "runtime/vm/loader.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>

namespace ubtrace::jit::test {
namespace {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(JitCache, CompilesEachBindingOnce) {
  auto object = vm::load_object(
      read_file(std::string(UBT_JIT_PROGS_DIR) + "/aggregations_v3.o"));
  ASSERT_TRUE(object) << object.error();
  const vm::Program *record = object->find_program("record");
  ASSERT_NE(record, nullptr);
  auto verified = vm::verify(*record, object->maps, vm::standard_helpers(),
                             vm::ContextInfo{64});
  ASSERT_TRUE(verified) << verified.error();
  auto maps_a = RegionMaps::for_object(*object);
  auto maps_b = RegionMaps::for_object(*object);
  ASSERT_TRUE(maps_a && maps_b);

  JitCache cache(engine());
  std::vector<std::shared_ptr<JittedProgram>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto p = cache.get(*verified, maps_a->bindings(), region_helpers());
      if (p)
        got[t] = *p;
    });
  for (auto &t : threads)
    t.join();
  for (auto &p : got) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p.get(), got[0].get());
  }
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 3u);

  auto other = cache.get(*verified, maps_b->bindings(), region_helpers());
  ASSERT_TRUE(other) << other.error();
  EXPECT_NE(other->get(), got[0].get());
  EXPECT_EQ(cache.size(), 2u);

  // Each runs against its own maps: the same calls leave the same contents.
  uint64_t args[8] = {5, 1234, 1};
  uint64_t r0 = got[0]->run(args);
  EXPECT_EQ((*other)->run(args), r0);
  EXPECT_EQ(maps_a->dump(), maps_b->dump());
  EXPECT_GT(got[0]->times().total_ns(), 0u);
}

} // namespace
} // namespace ubtrace::jit::test
