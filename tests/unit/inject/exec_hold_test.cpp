// Holding a program from its exec (exec_hold.h), on real processes: held
// through its loader to its first system call, the agent loaded there,
// and the program let go only when released.
#include "runtime/inject/exec_hold.h"
#include "runtime/inject/injector.h"
#include "tests/unit/inject/test_support.h"

#include <climits>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

std::string exe_of(pid_t pid) {
  char path[PATH_MAX];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), path, sizeof path);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

bool in_tracing_stop(pid_t pid) {
  std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  return stat.find(") t ") != std::string::npos;
}

// Started, and seized once it runs its own program (its exec is done).
struct Started {
  test::TestProcess target;
  std::optional<ExecHold> hold;
};

Started start_held(const std::string &prog,
                   const std::vector<std::string> &args = {}) {
  char resolved[PATH_MAX];
  EXPECT_NE(::realpath(prog.c_str(), resolved), nullptr) << prog;
  std::vector<std::string> argv{prog};
  argv.insert(argv.end(), args.begin(), args.end());
  Started s{test::TestProcess::start(argv), std::nullopt};
  EXPECT_TRUE(
      test::wait_until([&] { return exe_of(s.target.pid()) == resolved; }, 5s));
  auto hold = ExecHold::seize(s.target.pid());
  EXPECT_TRUE(hold.ok()) << hold.error();
  if (hold)
    s.hold.emplace(std::move(*hold));
  return s;
}

// The program's first call: its write, or an mmap (which pthread_create,
// in the bootstrap stub, also makes through libc's mmap: the hold must
// wait for the program's own call, not stop at the stub's).
class ExecHoldAtFirstCall : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecHoldAtFirstCall, LendsTheProgramThereAndHoldsItUntilReleased) {
  std::string marker = test::temp_path("exec_hold_attach");
  auto started =
      start_held(test::prog_path("first_write"), {marker, GetParam()});
  ASSERT_TRUE(started.hold);
  ExecHold &hold = *started.hold;
  auto past = hold.run_past_loader(Deadline(5000ms));
  ASSERT_TRUE(past.ok()) << past.error();
  ASSERT_TRUE(*past);
  auto safe = hold.run_to_safe_entry(5000ms);
  ASSERT_TRUE(safe.ok()) << safe.error();
  ASSERT_TRUE(*safe) << hold.why_not();
  EXPECT_GT(hold.entries(), 0);
  EXPECT_NE(hold.where().find(GetParam()), std::string::npos) << hold.where();

  InjectOptions options;
  options.agent_path = test::test_agent_path();
  options.entry_symbol = "ubtrace_agent_attach";
  options.entry_argument = "file:" + marker;
  options.hold = &hold;
  options.load_timeout = 5000ms;
  auto report = inject_agent(started.target.pid(), options);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->borrowed_tid, started.target.pid());
  // Loaded, and the program still held at its first call.
  EXPECT_TRUE(hold.held());
  EXPECT_NE(test::read_file(marker).find("attach pid="), std::string::npos);
  EXPECT_TRUE(in_tracing_stop(started.target.pid()));
  EXPECT_EQ(started.target.read_line(300ms), std::nullopt);

  hold.release();
  EXPECT_FALSE(hold.held());
  EXPECT_EQ(started.target.read_line(), "start");
  EXPECT_EQ(started.target.read_line(), "agent yes");
  started.target.write_stdin("done\n");
  EXPECT_EQ(started.target.wait_exit(), 0);
  ::unlink(marker.c_str());
}

INSTANTIATE_TEST_SUITE_P(Calls, ExecHoldAtFirstCall,
                         ::testing::Values("write", "mmap"));

TEST(ExecHold, ReleasedUnusedTheProgramRunsAsIfNeverHeld) {
  auto started = start_held(test::prog_path("first_write"));
  ASSERT_TRUE(started.hold);
  auto past = started.hold->run_past_loader(Deadline(5000ms));
  ASSERT_TRUE(past.ok()) << past.error();
  started.hold.reset(); // let go, wherever it was
  EXPECT_EQ(started.target.read_line(), "start");
  EXPECT_EQ(started.target.read_line(), "agent no");
  started.target.write_stdin("done\n");
  EXPECT_EQ(started.target.wait_exit(), 0);
}

TEST(ExecHold, AProgramWithoutALoaderIsNotWalked) {
  std::string prog = test::prog_path("static_prog");
  if (::access(prog.c_str(), X_OK) != 0)
    GTEST_SKIP() << "no static glibc here to build " << prog;
  auto started = start_held(prog);
  ASSERT_TRUE(started.hold);
  auto past = started.hold->run_past_loader(Deadline(5000ms));
  ASSERT_TRUE(past.ok()) << past.error();
  EXPECT_FALSE(*past);
  EXPECT_EQ(started.hold->entries(), 0);
}

} // namespace
} // namespace ubtrace::runtime::inject
