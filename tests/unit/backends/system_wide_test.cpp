// The system-wide scout's newcomers (backends/userspace/system_wide.h),
// with the kernel's real process events and real programs: an exec is
// looked at however late the CLI reads it, and an exec queued while a
// rescan listed the process is known before that process is looked at.
// Needs root (the process events); skips and says so otherwise.
#include "backends/userspace/system_wide.h"
#include "runtime/inject/proc_events.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ubtrace::backends {
namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// A private copy of sleep, so that no other process maps it, and a child
// that execs it; killed and reaped at the end.
class Newcomer : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto events = runtime::inject::ProcEvents::open(); !events)
      GTEST_SKIP() << "no process events here: " << events.error();
    dir_ = std::filesystem::temp_directory_path() /
           ("ubt_scout_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    program_ = (dir_ / "sleeper").string();
    std::filesystem::copy_file("/bin/sleep", program_);
    region_ = memfd_create("ubt_scout_region", MFD_CLOEXEC);
    ASSERT_GE(region_, 0);
    auto scout = ProcessScout::create({program_}, region_);
    ASSERT_TRUE(scout) << scout.error();
    scout_.emplace(std::move(*scout));
    ASSERT_TRUE(scout_->told_at_exec());
    scout_->due(monotonic_ns()); // the first call: a rescan
  }
  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    if (region_ >= 0)
      close(region_);
    if (!dir_.empty())
      std::filesystem::remove_all(dir_);
  }
  // Starts the copy and waits until it sleeps in main: its exec done,
  // and told (the kernel sends the event before the program runs).
  void exec_child() {
    child_ = fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      execl(program_.c_str(), "sleeper", "30", static_cast<char *>(nullptr));
      _exit(127);
    }
    auto exe = "/proc/" + std::to_string(child_) + "/exe";
    auto syscall = "/proc/" + std::to_string(child_) + "/syscall";
    for (int i = 0; i < 5000; ++i) {
      std::error_code ec;
      if (std::filesystem::read_symlink(exe, ec).string() == program_) {
        long nr = -1;
        if (FILE *f = fopen(syscall.c_str(), "r")) {
          if (fscanf(f, "%ld", &nr) != 1)
            nr = -1;
          fclose(f);
        }
        if (nr == SYS_clock_nanosleep || nr == SYS_nanosleep)
          return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL() << "the child did not exec " << program_ << " and sleep";
  }
  static bool has(const std::vector<pid_t> &pids, pid_t pid) {
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
  }

  std::filesystem::path dir_;
  std::string program_;
  int region_ = -1;
  pid_t child_ = -1;
  std::optional<ProcessScout> scout_;
};

TEST_F(Newcomer, AnExecReadLongAfterItIsStillLookedAt) {
  exec_child();
  // The CLI busy for longer than a newcomer's window (injecting another
  // process, under load): the exec is read 300 ms after it happened.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto due = scout_->due(monotonic_ns());
  EXPECT_TRUE(has(due, child_));
  EXPECT_TRUE(scout_->exec_seen(child_).has_value());
  EXPECT_TRUE(scout_->fresh_exec(child_));
  EXPECT_FALSE(scout_->fresh_exec(child_)); // once per exec
  auto look = scout_->look(child_);
  ASSERT_TRUE(look) << look.error();
  EXPECT_TRUE(look->probed);
}

TEST_F(Newcomer, ItsWindowStillEnds200MsAfterItsFirstLook) {
  exec_child();
  uint64_t first = monotonic_ns();
  EXPECT_TRUE(has(scout_->due(first), child_));
  // Within the window it comes due again (1, 2, 4 ... ms apart).
  EXPECT_TRUE(has(scout_->due(first + 50000000ull), child_));
  EXPECT_TRUE(scout_->exec_seen(child_).has_value());
  // Past it, left to the rescans.
  EXPECT_FALSE(has(scout_->due(first + 250000000ull), child_));
  EXPECT_FALSE(scout_->exec_seen(child_).has_value());
}

TEST_F(Newcomer, AnExecQueuedWhileARescanListedItIsKnownOnceReadAgain) {
  // As take_newcomers does for a process a rescan lists: the events are
  // read before the listing, the exec happens after, and its look would
  // take it for a program already running unless the events are read
  // again first.
  exec_child();
  EXPECT_FALSE(scout_->exec_seen(child_).has_value());
  scout_->read_events(monotonic_ns());
  EXPECT_TRUE(scout_->exec_seen(child_).has_value());
  EXPECT_TRUE(scout_->fresh_exec(child_));
}

TEST_F(Newcomer, ASettledNewcomerIsNotDueAgain) {
  exec_child();
  EXPECT_TRUE(has(scout_->due(monotonic_ns()), child_));
  scout_->settled(child_);
  EXPECT_FALSE(has(scout_->due(monotonic_ns()), child_));
  EXPECT_FALSE(scout_->exec_seen(child_).has_value());
}

} // namespace
} // namespace ubtrace::backends
