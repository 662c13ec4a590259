// The ptrace layer on real processes: interrupting a blocked read and
// letting it go again, and signals that arrive meanwhile.
#include "runtime/inject/ptrace_thread.h"
#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <gtest/gtest.h>
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

// Stopped: "t (tracing stop)" in /proc/PID/stat.
bool in_tracing_stop(pid_t pid) {
  std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  return stat.find(") t ") != std::string::npos;
}

TEST(PtraceThreadSignals, SignalArrivingWhileStoppingIsHandedOnAtOnce) {
  // Seized, then signalled before the interrupt: the signal-delivery-stop
  // comes first, and interrupt() resumes it with the signal instead of
  // keeping it, so that no signal ever depends on the tracer surviving.
  auto target = start_blocked_reader("handler");
  auto thread = PtraceThread::seize(target.pid(), target.pid());
  ASSERT_TRUE(thread.ok()) << thread.error();
  ::kill(target.pid(), SIGUSR1);
  ASSERT_TRUE(test::wait_until([&] { return in_tracing_stop(target.pid()); }));
  ASSERT_TRUE(thread->interrupt(Deadline(5000ms)).ok());
  EXPECT_EQ(thread->signals_passed(), 1);
  ASSERT_TRUE(thread->detach().ok());
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
