// The mount table reading behind the agent's placement in a container
// (runtime/inject/agent_placement.h); the placements themselves run on
// real pivot_root()ed processes in tests/faults/lifecycle/namespaces.test.
#include "runtime/inject/agent_placement.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::inject {
namespace {

// Shaped as a pivot_root()ed process's table: its tmpfs root, the host's
// root kept at /old, a bind of a host folder whose name holds a space,
// and a noexec /tmp mounted over the root's.
const char *kTable =
    "301 280 0:51 / / rw,relatime - tmpfs ubtrace-root rw,mode=755\n"
    "302 301 254:1 / /old rw,relatime - ext4 /dev/vda1 rw\n"
    "303 301 254:1 /srv/my\\040data /data ro,relatime - ext4 /dev/vda1 rw\n"
    "304 301 0:52 / /tmp rw,nosuid,nodev,noexec - tmpfs tmp rw\n"
    "garbage line\n";

TEST(AgentPlacement, ReadsMountinfoFieldsAndUnescapesPaths) {
  auto mounts = parse_mountinfo(kTable);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[1].major, 254u);
  EXPECT_EQ(mounts[1].minor, 1u);
  EXPECT_EQ(mounts[1].mount_point, "/old");
  EXPECT_EQ(mounts[2].root, "/srv/my data");
  EXPECT_EQ(mounts[2].mount_point, "/data");
  EXPECT_EQ(mounts[3].options, "rw,nosuid,nodev,noexec");
}

TEST(AgentPlacement, TheDeepestMountHoldsAPathAndPrefixesAreWholeNames) {
  auto mounts = parse_mountinfo(kTable);
  ASSERT_NE(mount_of(mounts, "/old/usr/lib/x.so"), nullptr);
  EXPECT_EQ(mount_of(mounts, "/old/usr/lib/x.so")->mount_point, "/old");
  EXPECT_EQ(mount_of(mounts, "/tmp")->mount_point, "/tmp");
  EXPECT_EQ(mount_of(mounts, "/tmp/a")->mount_point, "/tmp");
  // "/oldies" is not below "/old", nor "/tmpfoo" below "/tmp".
  EXPECT_EQ(mount_of(mounts, "/oldies/a")->mount_point, "/");
  EXPECT_EQ(mount_of(mounts, "/tmpfoo")->mount_point, "/");
  EXPECT_EQ(mount_of({}, "/a"), nullptr);
}

TEST(AgentPlacement, ALaterMountOnTheSamePointIsTheOneOnTop) {
  auto mounts = parse_mountinfo(
      "1 0 8:1 / / rw - ext4 a rw\n"
      "2 1 0:40 / /run rw - tmpfs b rw\n"
      "3 2 0:41 / /run ro,noexec - tmpfs c rw\n");
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mount_of(mounts, "/run/x")->minor, 41u);
}

} // namespace
} // namespace ubtrace::runtime::inject
