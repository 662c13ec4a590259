// Trampoline placement: within reach, satisfying the rel32 constraint, and
// never a multiple of 1 MiB (give or take 16 KiB) away from the code it
// serves, where branch predictors would alias the two.
#include "runtime/hook/code_memory.h"
#include "tests/unit/hook/test_functions.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::hook {
namespace {

bool aliases_with(uint64_t at, uint64_t code) {
  uint64_t d = (at - code) & ((1u << 20) - 1);
  return d < (16u << 10) || d > (1u << 20) - (16u << 10);
}

TEST(HookCodeMemory, PlacementSatisfiesTheConstraintAndDoesNotAlias) {
  Result<MemoryMap> map = MemoryMap::read_self();
  ASSERT_TRUE(map.ok()) << map.error();
  const uint64_t code = reinterpret_cast<uint64_t>(&hk_counted);
  // Top byte only (what a 5-byte function whose second instruction starts
  // at byte 4 needs: the nearest fit is exactly 0x06000000 away), low byte
  // only, two bytes, and none.
  for (uint8_t mask : {0b1000, 0b0001, 0b0011, 0b0000}) {
    for (int round = 0; round < 3; ++round) { // later blocks share chunks
      CodeRequest req;
      req.size = 600;
      req.near = code;
      req.rel_base = code + 5;
      req.constraint.mask = mask;
      req.lo = code > (1ull << 31) ? code - (1ull << 31) + (1u << 20)
                                   : kLowestMappable;
      req.hi = code + (1ull << 31) - (1u << 20);
      Result<uint64_t> at = allocate_code(req, *map);
      ASSERT_TRUE(at.ok()) << at.error();
      int64_t rel = static_cast<int64_t>(*at - req.rel_base);
      EXPECT_TRUE(req.constraint.satisfied_by(rel))
          << "mask " << int(mask) << " rel " << std::hex << rel;
      EXPECT_GE(*at, req.lo);
      EXPECT_LE(*at + req.size, req.hi);
      EXPECT_FALSE(aliases_with(*at, code))
          << "mask " << int(mask) << ": block at " << std::hex << *at
          << " is " << (*at - code) << " from the code";
    }
  }
}

} // namespace
} // namespace ubtrace::runtime::hook
