#include "runtime/file_text.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/proc_maps.h"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ubtrace::runtime::symbols;

TEST(ProcMaps, ParsesEveryKindOfLine) {
  const char *text =
      "55d0c5a4e000-55d0c5a50000 r--p 00000000 fd:01 1234        "
      "        /usr/bin/cat\n"
      "55d0c5a50000-55d0c5a55000 r-xp 00002000 fd:01 1234        "
      "        /usr/bin/cat\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000001000 r-xs 00001000 08:02 99 /tmp/my lib.so "
      "(deleted)\n"
      "7ffd5e3f0000-7ffd5e411000 rw-p 00000000 00:00 0       [stack]\n"
      "garbage line\n";
  auto maps = parse_proc_maps(text);
  ASSERT_EQ(maps.size(), 5u);
  EXPECT_EQ(maps[1].start, 0x55d0c5a50000u);
  EXPECT_EQ(maps[1].end, 0x55d0c5a55000u);
  EXPECT_EQ(maps[1].offset, 0x2000u);
  EXPECT_TRUE(maps[1].executable);
  EXPECT_FALSE(maps[1].writable);
  EXPECT_EQ(maps[1].dev_major, 0xfdu);
  EXPECT_EQ(maps[1].dev_minor, 1u);
  EXPECT_EQ(maps[1].inode, 1234u);
  EXPECT_EQ(maps[1].path, "/usr/bin/cat");
  EXPECT_TRUE(maps[1].is_file());
  EXPECT_EQ(maps[1].file_offset_of(0x55d0c5a50010), 0x2010u);
  EXPECT_EQ(maps[2].path, "");
  EXPECT_FALSE(maps[2].is_file());
  EXPECT_EQ(maps[3].path, "/tmp/my lib.so");
  EXPECT_TRUE(maps[3].deleted);
  EXPECT_TRUE(maps[3].shared);
  EXPECT_EQ(maps[4].path, "[stack]");
  EXPECT_FALSE(maps[4].is_file());
  EXPECT_EQ(mapped_file_paths(maps),
            (std::vector<std::string>{"/usr/bin/cat", "/tmp/my lib.so"}));
}

TEST(ProcMaps, ThisProcess) {
  auto space = AddressSpace::snapshot(::getpid());
  ASSERT_TRUE(space) << space.error();
  auto exe = std::filesystem::read_symlink("/proc/self/exe").string();
  EXPECT_EQ(space->executable(), exe);
  // This function's code is in an executable mapping of the test binary.
  auto here = reinterpret_cast<uint64_t>(&parse_proc_maps);
  const Mapping *m = space->mapping_at(here);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->executable);
  EXPECT_EQ(m->path, exe);
  ASSERT_NE(space->identity_of(*m), nullptr);
  EXPECT_EQ(space->identity_of(*m)->inode, m->inode);
  EXPECT_EQ(space->mapping_at(0), nullptr);
  EXPECT_FALSE(AddressSpace::snapshot(-5));
}

// A process that is reaped between the open of its maps and the read: the
// kernel answers the read with ESRCH. The read is an error to report, not
// an exception that ends the tracer (a std::filebuf throws here).
TEST(ProcMaps, AProcessReapedWhileItsMapsAreReadIsAnError) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  std::string path = "/proc/" + std::to_string(child) + "/maps";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  auto text = ubtrace::read_fd(fd, path);
  close(fd);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(), "cannot read " + path + ": No such process");
  auto again = read_proc_maps(child);
  EXPECT_FALSE(again);
}
