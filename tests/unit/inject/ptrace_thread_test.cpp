// The ptrace layer on real processes: interrupting a blocked read and
// letting it go again, system calls and function calls on a borrowed
// thread, deferred signals.
#include "runtime/inject/borrowed_thread.h"
#include "runtime/inject/ptrace_thread.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/target_glibc.h"
#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;
constexpr int64_t kErestartsys = -512;

test::TestProcess start_blocked_reader(const std::string &mode = "") {
  std::vector<std::string> argv{test::prog_path("blocked_read")};
  if (!mode.empty())
    argv.push_back(mode);
  auto target = test::TestProcess::start(argv);
  EXPECT_TRUE(target.wait_for_line("ready"));
  EXPECT_TRUE(test::wait_until([&] {
    return test::blocked_syscall(target.pid(), target.pid()) == SYS_read;
  }));
  return target;
}

TEST(PtraceThread, InterruptsABlockedReadWhichThenRestarts) {
  auto target = start_blocked_reader();
  auto thread = PtraceThread::seize(target.pid(), target.pid());
  ASSERT_TRUE(thread.ok()) << thread.error();
  ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
  auto regs = thread->registers();
  ASSERT_TRUE(regs.ok());
  EXPECT_EQ(static_cast<int64_t>(regs->orig_rax), SYS_read);
  EXPECT_EQ(static_cast<int64_t>(regs->rax), kErestartsys);
  ASSERT_TRUE(thread->detach().ok());
  // Still blocked in the same read, which gets the data.
  ASSERT_TRUE(test::wait_until([&] {
    return test::blocked_syscall(target.pid(), target.pid()) == SYS_read;
  }));
  target.write_stdin("abc\n");
  EXPECT_EQ(target.read_line(),
            "read n=4 errno=0 data=abc signals=0 sender=0 code=0");
  target.close_stdin();
  EXPECT_EQ(target.wait_exit(), 0);
}

TEST(PtraceThread, SeizeOfAMissingThreadSaysSo) {
  auto thread = PtraceThread::seize(1 << 22, (1 << 22) + 1);
  ASSERT_FALSE(thread.ok());
  EXPECT_EQ(thread.error(), "cannot attach to " +
                                std::to_string((1 << 22) + 1) +
                                ": no such process");
}

class BorrowedThreadTest : public ::testing::Test {
protected:
  void SetUp() override {
    target_.emplace(start_blocked_reader());
    auto glibc = TargetGlibc::locate(target_->pid());
    ASSERT_TRUE(glibc.ok()) << glibc.error();
    glibc_.emplace(std::move(*glibc));
    auto memory = RemoteMemory::open(target_->pid());
    ASSERT_TRUE(memory.ok());
    memory_.emplace(std::move(*memory));
    auto thread = PtraceThread::seize(target_->pid(), target_->pid());
    ASSERT_TRUE(thread.ok()) << thread.error();
    ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
    auto borrowed = BorrowedThread::borrow(std::move(*thread));
    ASSERT_TRUE(borrowed.ok()) << borrowed.error();
    borrowed_.emplace(std::move(*borrowed));
  }

  Result<int64_t> remote_syscall(long nr,
                                 std::initializer_list<uint64_t> args) {
    return borrowed_->syscall(glibc_->syscall_instruction(), nr, args,
                              Deadline(5000ms));
  }

  std::optional<test::TestProcess> target_;
  std::optional<TargetGlibc> glibc_;
  std::optional<RemoteMemory> memory_;
  std::optional<BorrowedThread> borrowed_;
};

TEST_F(BorrowedThreadTest, RunsSystemCallsAndFunctionsThenGivesTheThreadBack) {
  EXPECT_EQ(*remote_syscall(SYS_getpid, {}), target_->pid());
  EXPECT_EQ(*remote_syscall(SYS_gettid, {}), target_->pid());
  // A failing call reports -errno.
  EXPECT_EQ(*remote_syscall(SYS_close, {9999}), -EBADF);

  auto page =
      remote_syscall(SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                                MAP_PRIVATE | MAP_ANONYMOUS, ~uint64_t{0}, 0});
  ASSERT_TRUE(page.ok());
  ASSERT_GT(*page, 0);
  uint64_t base = static_cast<uint64_t>(*page);
  uint8_t trap = 0xcc;
  ASSERT_TRUE(memory_->write(base, &trap, 1).ok());
  const char number[] = "-4321";
  ASSERT_TRUE(memory_->write(base + 64, number, sizeof number).ok());
  auto atoi_at = glibc_->function("atoi");
  ASSERT_TRUE(atoi_at.has_value());
  // Stack: the top of the page; the int3 at its start is the return.
  auto value = borrowed_->call(*memory_, *atoi_at, {base + 64}, base + 4096,
                               base, Deadline(5000ms));
  ASSERT_TRUE(value.ok()) << value.error();
  EXPECT_EQ(static_cast<int32_t>(*value), -4321);
  auto getpid_at = glibc_->function("getpid");
  EXPECT_EQ(*borrowed_->call(*memory_, *getpid_at, {}, base + 4096, base,
                             Deadline(5000ms)),
            static_cast<uint64_t>(target_->pid()));
  EXPECT_EQ(*remote_syscall(SYS_munmap, {base, 4096}), 0);

  ASSERT_TRUE(borrowed_->give_back().ok());
  // The read it was blocked in goes on as if nothing happened.
  ASSERT_TRUE(test::wait_until([&] {
    return test::blocked_syscall(target_->pid(), target_->pid()) == SYS_read;
  }));
  target_->write_stdin("after\n");
  EXPECT_EQ(target_->read_line(),
            "read n=6 errno=0 data=after signals=0 sender=0 code=0");
  target_->close_stdin();
  EXPECT_EQ(target_->wait_exit(), 0);
}

TEST(PtraceThreadSignals, SignalWhileHeldIsDeliveredAtDetachWithItsSiginfo) {
  auto target = start_blocked_reader("handler");
  auto thread = PtraceThread::seize(target.pid(), target.pid());
  ASSERT_TRUE(thread.ok()) << thread.error();
  ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
  auto glibc = TargetGlibc::locate(target.pid());
  ASSERT_TRUE(glibc.ok());
  auto borrowed = BorrowedThread::borrow(std::move(*thread));
  ASSERT_TRUE(borrowed.ok());
  // Sent by this process while the thread is held: the signal-delivery-stop
  // happens during the next system call run, and the signal is kept.
  ::kill(target.pid(), SIGUSR1);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(*borrowed->syscall(glibc->syscall_instruction(), SYS_getpid, {},
                                 Deadline(5000ms)),
              target.pid());
  EXPECT_EQ(borrowed->thread().deferred_signal_count(), 1u);
  ASSERT_TRUE(borrowed->give_back().ok());
  // Delivered where the thread was: in read, no SA_RESTART, so EINTR, with
  // this process as the sender and SI_USER (0) as the code.
  EXPECT_EQ(target.read_line(),
            "read n=-1 errno=EINTR data= signals=1 sender=" +
                std::to_string(::getpid()) + " code=0");
  target.close_stdin();
  EXPECT_EQ(target.wait_exit(), 0);
}

} // namespace
} // namespace ubtrace::runtime::inject
