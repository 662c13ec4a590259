// Where a thread may be borrowed: decisions on a real process's memory
// and glibc, for chosen instruction pointers and for a thread really
// stopped inside a signal handler.
#include "runtime/inject/injector.h"
#include "runtime/inject/ptrace_thread.h"
#include "runtime/inject/safe_point.h"
#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

class SafePointTest : public ::testing::Test {
protected:
  void SetUp() override {
    target_.emplace(
        test::TestProcess::start({test::prog_path("blocked_read")}));
    ASSERT_TRUE(target_->wait_for_line("ready"));
    ASSERT_TRUE(test::wait_until([&] {
      return test::blocked_syscall(target_->pid(), target_->pid()) == SYS_read;
    }));
    auto glibc = TargetGlibc::locate(target_->pid());
    ASSERT_TRUE(glibc.ok()) << glibc.error();
    glibc_.emplace(std::move(*glibc));
    auto memory = RemoteMemory::open(target_->pid());
    ASSERT_TRUE(memory.ok());
    memory_.emplace(std::move(*memory));
    // Real registers of the blocked thread, as the injector sees them.
    auto thread = PtraceThread::seize(target_->pid(), target_->pid());
    ASSERT_TRUE(thread.ok()) << thread.error();
    ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
    regs_ = *thread->registers();
    ASSERT_TRUE(thread->detach().ok());
  }

  SafePoint at(uint64_t rip) {
    user_regs_struct regs = regs_;
    regs.rip = rip;
    return classify_stop(regs, *glibc_, *memory_);
  }

  std::optional<test::TestProcess> target_;
  std::optional<TargetGlibc> glibc_;
  std::optional<RemoteMemory> memory_;
  user_regs_struct regs_{};
};

TEST_F(SafePointTest, BlockedInReadIsSafe) {
  SafePoint where = classify_stop(regs_, *glibc_, *memory_);
  EXPECT_TRUE(where.safe) << where.reason;
  EXPECT_EQ(where.reason.rfind("blocked in libc.so.6:read+", 0), 0u)
      << where.reason;
}

TEST_F(SafePointTest, InsideMallocOrDlopenIsNot) {
  for (const char *name :
       {"malloc", "free", "dlopen", "pthread_create", "dl_iterate_phdr"}) {
    auto address = glibc_->function(name);
    ASSERT_TRUE(address.has_value()) << name;
    SafePoint where = at(*address + 4);
    EXPECT_FALSE(where.safe) << name;
    EXPECT_EQ(where.reason.rfind("inside glibc (libc.so.6:", 0), 0u)
        << where.reason;
  }
}

TEST_F(SafePointTest, ProgramCodeIsSafe) {
  auto maps = read_maps(target_->pid());
  ASSERT_TRUE(maps.ok());
  uint64_t code = 0;
  for (const MappedRegion &region : *maps)
    if (region.executable && region.path == test::prog_path("blocked_read"))
      code = region.start + 16;
  ASSERT_NE(code, 0u);
  SafePoint where = at(code);
  EXPECT_TRUE(where.safe) << where.reason;
  EXPECT_EQ(where.reason.rfind("running its own code at 0x", 0), 0u);
}

// How the injector would see blocked_read MODE's main thread once it
// blocks in the system call `call`.
SafePoint blocked_read_in(const char *mode, long call) {
  auto target =
      test::TestProcess::start({test::prog_path("blocked_read"), mode});
  if (!target.wait_for_line("ready") || !test::wait_until([&] {
        return test::blocked_syscall(target.pid(), target.pid()) == call;
      }))
    return {false, "never blocked in system call " + std::to_string(call)};
  auto thread = PtraceThread::seize(target.pid(), target.pid());
  if (!thread.ok() || !thread->interrupt(Deadline(5000ms)).ok())
    return {false, "cannot stop it"};
  auto regs = thread->registers();
  auto glibc = TargetGlibc::locate(target.pid());
  auto memory = RemoteMemory::open(target.pid());
  if (!regs || !glibc.ok() || !memory.ok())
    return {false, "cannot look at it"};
  SafePoint where = classify_stop(*regs, *glibc, *memory);
  (void)thread->detach();
  return where;
}

// A lock-free wrapper is a safe point only when the program called it:
// glibc's own code around it may be mid-update with no lock to show (a
// one-thread process's first malloc waits in getrandom with its arena not
// yet set up). system() waiting for its child is such a caller.
TEST(SafePointCallers, LockFreeCallFromGlibcsOwnCodeIsNot) {
  SafePoint where = blocked_read_in("system", SYS_wait4);
  EXPECT_FALSE(where.safe) << where.reason;
  EXPECT_EQ(where.reason.rfind("inside glibc (libc.so.6:", 0), 0u)
      << where.reason;
  EXPECT_NE(where.reason.find("called by glibc's "), std::string::npos)
      << where.reason;
}

// stdio's frames (fgets, libio's _IO_* internals) between the program and
// read change nothing but their FILE: still a safe point.
TEST(SafePointCallers, ReadCalledThroughStdioIs) {
  SafePoint where = blocked_read_in("fgets", SYS_read);
  EXPECT_TRUE(where.safe) << where.reason;
  EXPECT_EQ(where.reason.rfind("blocked in libc.so.6:read+", 0), 0u)
      << where.reason;
}

TEST(SafePointAllowList, OnlyLockFreeWrappers) {
  EXPECT_TRUE(is_lock_free_libc_function("read"));
  EXPECT_TRUE(is_lock_free_libc_function("clock_nanosleep"));
  EXPECT_TRUE(is_lock_free_libc_function("epoll_wait"));
  EXPECT_FALSE(is_lock_free_libc_function("malloc"));
  EXPECT_FALSE(is_lock_free_libc_function("fread"));
  EXPECT_FALSE(is_lock_free_libc_function("pthread_mutex_lock"));
  EXPECT_FALSE(is_lock_free_libc_function("dlopen"));
  EXPECT_TRUE(is_stdio_function("fgets"));
  EXPECT_TRUE(is_stdio_function("_IO_file_underflow"));
  EXPECT_FALSE(is_stdio_function("malloc"));
  EXPECT_FALSE(is_stdio_function("system"));
}

TEST(SafePointSignalHandler, HandlerThatInterruptedGlibcIsNotSafe) {
  auto target = test::TestProcess::start({test::prog_path("handler_spin")});
  ASSERT_TRUE(target.wait_for_line("ready"));
  // Main sleeps in glibc; the handler interrupts it and spins in the
  // program's own code.
  ASSERT_TRUE(test::wait_until([&] {
    auto nr = test::blocked_syscall(target.pid(), target.pid());
    return nr == SYS_clock_nanosleep || nr == SYS_nanosleep;
  }));
  target.signal(SIGUSR1);
  ASSERT_TRUE(target.wait_for_line("in handler"));

  auto glibc = TargetGlibc::locate(target.pid());
  ASSERT_TRUE(glibc.ok()) << glibc.error();
  auto memory = RemoteMemory::open(target.pid());
  ASSERT_TRUE(memory.ok());
  // Stopped where it runs its own code (not still returning from the
  // write that announced the handler)...
  std::optional<SafePoint> where;
  ASSERT_TRUE(test::wait_until([&] {
    auto thread = PtraceThread::seize(target.pid(), target.pid());
    if (!thread.ok() || !thread->interrupt(Deadline(5000ms)).ok())
      return false;
    auto regs = thread->registers();
    if (regs.ok() && !glibc->in_glibc_code(regs->rip))
      where = classify_stop(*regs, *glibc, *memory);
    return thread->detach().ok() && where.has_value();
  }));
  EXPECT_FALSE(where->safe); // ...but above a glibc frame
  EXPECT_EQ(where->reason.rfind(
                "in a signal handler that interrupted glibc (libc.so.6:", 0),
            0u)
      << where->reason;

  // And so the injector finds no thread to borrow.
  InjectOptions options;
  options.agent_path = test::test_agent_path();
  options.safe_point_timeout = 300ms;
  auto report = inject_agent(target.pid(), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().rfind("no thread of process " +
                                     std::to_string(target.pid()) +
                                     " stopped where the injector can use it "
                                     "within 300 ms",
                                 0),
            0u)
      << report.error();
  EXPECT_NE(report.error().find("in a signal handler that interrupted glibc"),
            std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::inject
