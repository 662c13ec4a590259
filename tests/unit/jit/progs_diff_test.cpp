// Real clang-compiled programs (progs/*.bpf.c, for -mcpu=v3 and v4) run in
// the interpreter and the JIT, each engine against its own real
// shared-memory maps: every call's r0 and the final contents of every map
// and of the event ring must be the same.
#include "runtime/vm/loader.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <random>

namespace ubtrace::jit::test {
namespace {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr uint32_t kCtxSize = 64; // struct jit_args

// Inputs: edge values and random ones, the same for both engines.
std::vector<std::vector<uint8_t>> inputs(size_t count) {
  std::mt19937_64 rng(42);
  const uint64_t edges[] = {0,  1,    2,          7,     63,
                            64, 1000, 0xffffffff, ~0ull, 0x8000000000000000};
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < count; ++i) {
    uint64_t args[8];
    for (int a = 0; a < 8; ++a)
      args[a] = i < std::size(edges) && a < 2
                    ? edges[(i + a) % std::size(edges)]
                    : rng() >> (rng() % 64);
    auto *p = reinterpret_cast<const uint8_t *>(args);
    out.emplace_back(p, p + kCtxSize);
  }
  return out;
}

struct Loaded {
  vm::Object object;
  std::vector<vm::VerifiedProgram> programs;
};

Loaded load(const std::string &file) {
  Loaded out;
  auto object =
      vm::load_object(read_file(std::string(UBT_JIT_PROGS_DIR) + "/" + file));
  if (!object) {
    ADD_FAILURE() << file << ": " << object.error();
    return out;
  }
  out.object = std::move(*object);
  for (const vm::Program &p : out.object.programs) {
    auto verified = vm::verify(p, out.object.maps, vm::standard_helpers(),
                               vm::ContextInfo{kCtxSize});
    if (!verified) {
      ADD_FAILURE() << file << " " << p.name << ": " << verified.error();
      continue;
    }
    out.programs.push_back(std::move(*verified));
  }
  return out;
}

class ProgsDiff : public testing::TestWithParam<std::string> {};

TEST_P(ProgsDiff, SameResultsAndMaps) {
  Loaded loaded = load(GetParam());
  ASSERT_FALSE(loaded.programs.empty());
  auto interp_maps = RegionMaps::for_object(loaded.object);
  auto jit_maps = RegionMaps::for_object(loaded.object);
  auto fresh = RegionMaps::for_object(loaded.object);
  ASSERT_TRUE(interp_maps && jit_maps && fresh);
  const vm::HelperImpls &helpers = region_helpers();

  std::vector<std::shared_ptr<JittedProgram>> compiled;
  std::vector<vm::BoundProgram> bound;
  for (const vm::VerifiedProgram &p : loaded.programs) {
    auto c = engine().compile(p, jit_maps->bindings(), helpers);
    ASSERT_TRUE(c) << c.error();
    compiled.push_back(*c);
    auto b = vm::bind_program(p, interp_maps->bindings(), helpers);
    ASSERT_TRUE(b) << b.error();
    bound.push_back(std::move(*b));
  }
  for (const std::vector<uint8_t> &ctx : inputs(80)) {
    for (size_t i = 0; i < loaded.programs.size(); ++i) {
      std::vector<uint8_t> a = ctx, b = ctx;
      vm::RunResult r = vm::run(bound[i], a.data());
      ASSERT_EQ(r.status, vm::RunStatus::Ok) << vm::describe(r.status);
      uint64_t r0 = compiled[i]->run(b.data());
      ASSERT_EQ(hex_u64(r0), hex_u64(r.r0))
          << loaded.programs[i].name << " on " << hex_bytes(ctx);
      ASSERT_EQ(a, b);
    }
  }
  std::string want = interp_maps->dump();
  EXPECT_EQ(jit_maps->dump(), want);
  bool writable_maps = false;
  for (const vm::MapDef &m : loaded.object.maps)
    writable_maps |= !m.read_only;
  if (writable_maps)
    EXPECT_NE(fresh->dump(), want) << "the programs left the maps untouched";
}

INSTANTIATE_TEST_SUITE_P(
    Progs, ProgsDiff,
    testing::Values("aggregations_v3.o", "aggregations_v4.o",
                    "callbacks_deep_v3.o", "callbacks_deep_v4.o",
                    "control_flow_v3.o", "control_flow_v4.o"),
    [](const auto &info) {
      std::string name = info.param;
      return name.substr(0, name.find('.'));
    });

} // namespace
} // namespace ubtrace::jit::test
