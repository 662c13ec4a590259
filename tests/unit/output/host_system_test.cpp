// HostSystemInfo on real files: a passwd file and cgroup hierarchies made
// of real directories (a cgroup id is its directory's inode number).
#include "backends/output/host_system.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::output::test {
namespace {

namespace fs = std::filesystem;

uint64_t inode_of(const fs::path &p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

class HostSystemTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ubt-output-host-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "unified" / "user.slice" / "app");
    fs::create_directories(root_ / "cpu" / "user.slice" / "app");
    fs::create_directories(root_ / "memory" / "other");
    std::ofstream(root_ / "passwd") << "root:x:0:0:root:/root:/bin/bash\n"
                                    << "broken line\n"
                                    << "alice:x:1000:1000::/home/a:/bin/sh\n";
    std::ofstream(root_ / "mounts")
        << "proc /proc proc rw 0 0\n"
        << "cgroup " << (root_ / "memory").string() << " cgroup rw,memory 0 0\n"
        << "cgroup " << (root_ / "cpu").string() << " cgroup rw,cpu 0 0\n"
        << "cgroup2 " << (root_ / "unified").string() << " cgroup2 rw 0 0\n"
        << "cgroup /does/not/exist cgroup rw 0 0\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(HostSystemTest, UsernamesFromPasswd) {
  HostSystemInfo host((root_ / "passwd").string(), (root_ / "mounts").string());
  EXPECT_EQ(host.username(0), "root");
  EXPECT_EQ(host.username(1000), "alice");
  EXPECT_EQ(host.username(4242), "");
}

TEST_F(HostSystemTest, CgroupRootsPutCgroup2FirstThenV1ByName) {
  HostSystemInfo host((root_ / "passwd").string(), (root_ / "mounts").string());
  auto roots = host.cgroup_roots();
  ASSERT_EQ(roots.size(), 3u);
  EXPECT_EQ(roots[0].first, "unified");
  EXPECT_EQ(roots[1].first, "cpu");
  EXPECT_EQ(roots[2].first, "memory");
}

TEST_F(HostSystemTest, CgroupPathsByInode) {
  HostSystemInfo host((root_ / "passwd").string(), (root_ / "mounts").string());
  uint64_t app = inode_of(root_ / "unified" / "user.slice" / "app");
  EXPECT_EQ(host.cgroup_path(app), "unified:/user.slice/app");
  // Asked twice: the cached answer is checked and reused.
  EXPECT_EQ(host.cgroup_path(app), "unified:/user.slice/app");
  EXPECT_EQ(host.cgroup_path(inode_of(root_ / "unified")), "unified:/");
  EXPECT_EQ(host.cgroup_path(inode_of(root_ / "memory" / "other")),
            "memory:/other");
  EXPECT_EQ(host.cgroup_path(inode_of(root_ / "passwd") + 1000000), "");
}

} // namespace
} // namespace ubtrace::output::test
