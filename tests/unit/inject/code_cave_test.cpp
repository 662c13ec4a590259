// Code caves (runtime/inject/code_cave.h) in a real process: found in
// libc's last text page, filled, then found again holding the code, and a
// different blob goes elsewhere in the cave; the page stays the process's
// own (another process mapping libc sees its original bytes).
#include "runtime/inject/code_cave.h"
#include "runtime/inject/target_glibc.h"
#include "tests/unit/inject/test_support.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::inject {
namespace {

TEST(CodeCave, FoundInLibcFilledAndReused) {
  auto target = test::TestProcess::start({test::prog_path("blocked_read")});
  ASSERT_TRUE(target.wait_for_line("ready"));
  auto memory = RemoteMemory::open(target.pid());
  ASSERT_TRUE(memory.ok());
  auto maps = read_maps(target.pid());
  ASSERT_TRUE(maps.ok());
  std::vector<uint8_t> code(700);
  for (size_t i = 0; i < code.size(); ++i)
    code[i] = static_cast<uint8_t>(i * 7 + 1);
  auto cave = find_code_cave(*maps, *memory, code, "");
  ASSERT_TRUE(cave.ok()) << cave.error();
  EXPECT_EQ(classify_glibc_path(cave->path), GlibcPart::Libc) << cave->path;
  EXPECT_EQ(cave->address % 64, 0u);
  EXPECT_GE(cave->size, code.size());
  EXPECT_FALSE(cave->holds_code);
  const MappedRegion *text = find_region(*maps, cave->address);
  ASSERT_NE(text, nullptr);
  EXPECT_TRUE(text->executable);
  EXPECT_FALSE(text->writable);

  ASSERT_TRUE(install_code(*cave, *memory, code).ok());
  auto again = find_code_cave(*maps, *memory, code, "");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->holds_code);
  EXPECT_EQ(again->address, cave->address);
  // Another blob does not overwrite it.
  std::vector<uint8_t> other(100, 0x90);
  auto elsewhere = find_code_cave(*maps, *memory, other, "");
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_TRUE(elsewhere->address >= cave->address + code.size() ||
              elsewhere->path != cave->path);

  // The page was copied for the target only.
  auto fresh = test::TestProcess::start({test::prog_path("blocked_read")});
  ASSERT_TRUE(fresh.wait_for_line("ready"));
  auto fresh_memory = RemoteMemory::open(fresh.pid());
  auto fresh_maps = read_maps(fresh.pid());
  ASSERT_TRUE(fresh_memory.ok() && fresh_maps.ok());
  auto fresh_cave = find_code_cave(*fresh_maps, *fresh_memory, code, "");
  ASSERT_TRUE(fresh_cave.ok());
  EXPECT_FALSE(fresh_cave->holds_code);
  target.close_stdin();
  fresh.close_stdin();
}

} // namespace
} // namespace ubtrace::runtime::inject
