#include "runtime/hook/memory_map.h"
#include "tests/unit/hook/helpers.h"
#include "tests/unit/hook/test_functions.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sys/mman.h>

namespace ubtrace::runtime::hook {
namespace {

const char kSample[] =
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus\n"
    "00651000-00652000 rw-p 00051000 08:02 173521      /usr/bin/dbus\n"
    "7f0000000000-7f0000021000 ---p 00000000 00:00 0\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]\n";

TEST(HookMemoryMap, ParsesRegionsAndProtections) {
  Result<MemoryMap> m = MemoryMap::parse(kSample, strlen(kSample));
  ASSERT_TRUE(m.ok()) << m.error();
  ASSERT_EQ(m->regions().size(), 4u);
  const MemoryRegion *text = m->find(0x400123);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->prot, PROT_READ | PROT_EXEC);
  EXPECT_EQ(m->find(0x451fff), text);
  EXPECT_EQ(m->find(0x452000), nullptr);
  EXPECT_EQ(m->find(0x7f0000000010)->prot, 0);
}

TEST(HookMemoryMap, FreeRangesBetweenRegions) {
  Result<MemoryMap> m = MemoryMap::parse(kSample, strlen(kSample));
  ASSERT_TRUE(m.ok());
  std::vector<AddressRange> free = m->free_ranges(0x300000, 0x700000);
  ASSERT_EQ(free.size(), 3u);
  EXPECT_EQ(free[0].start, 0x300000u);
  EXPECT_EQ(free[0].end, 0x400000u);
  EXPECT_EQ(free[1].start, 0x452000u);
  EXPECT_EQ(free[1].end, 0x651000u);
  EXPECT_EQ(free[2].start, 0x652000u);
  EXPECT_EQ(free[2].end, 0x700000u);
}

TEST(HookMemoryMap, RejectsGarbage) {
  const char bad[] = "hello world\n";
  EXPECT_FALSE(MemoryMap::parse(bad, strlen(bad)).ok());
}

TEST(HookMemoryMap, SelfHasOurCodeExecutable) {
  Result<MemoryMap> m = MemoryMap::read_self();
  ASSERT_TRUE(m.ok()) << m.error();
  const MemoryRegion *r = m->find(testing::addr(hk_frame));
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->prot & PROT_EXEC);
  EXPECT_FALSE(r->prot & PROT_WRITE);
}

} // namespace
} // namespace ubtrace::runtime::hook
