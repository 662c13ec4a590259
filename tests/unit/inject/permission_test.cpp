// Attaching to another user's process: refused with an explanation when
// unprivileged, allowed for root.
#include "runtime/inject/injector.h"
#include "tests/unit/inject/test_support.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;
constexpr uid_t kNobody = 65534;

// Runs inject_agent(pid) in a child process that became `nobody`; returns
// its error text ("OK" if it succeeded).
std::string inject_as_nobody(pid_t pid) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    std::string text;
    if (::setgroups(0, nullptr) != 0 ||
        ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      text = "could not become nobody";
    } else {
      InjectOptions options;
      options.agent_path = test::test_agent_path();
      auto report = inject_agent(pid, options);
      text = report.ok() ? "OK" : report.error();
    }
    ssize_t n = ::write(fds[1], text.data(), text.size());
    (void)n;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char chunk[512];
  ssize_t n;
  while ((n = ::read(fds[0], chunk, sizeof chunk)) > 0)
    text.append(chunk, static_cast<size_t>(n));
  ::close(fds[0]);
  int status;
  ::waitpid(child, &status, 0);
  return text;
}

void expect_explained_refusal(const std::string &error, pid_t pid) {
  EXPECT_EQ(error.rfind("cannot attach to " + std::to_string(pid) +
                            ": permission denied (",
                        0),
            0u)
      << error;
  EXPECT_TRUE(error.find("ptrace_scope=") != std::string::npos ||
              error.find("no Yama ptrace_scope") != std::string::npos)
      << error;
  EXPECT_NE(error.find("not the same user"), std::string::npos) << error;
  EXPECT_NE(error.find("not root"), std::string::npos) << error;
}

TEST(InjectPermissions, AnotherUsersProcessIsRefusedWithReasons) {
  if (::geteuid() == 0) {
    // Root's target, attacked by a child that dropped to nobody.
    auto target = test::TestProcess::start({test::prog_path("counter_loop")});
    ASSERT_EQ(target.read_line(), "tick 0");
    expect_explained_refusal(inject_as_nobody(target.pid()), target.pid());
    target.write_stdin("q");
    EXPECT_TRUE(target.wait_for_line("done"));
    EXPECT_EQ(target.wait_exit(), 0);
    return;
  }
  struct stat st;
  if (::stat("/proc/1", &st) != 0 || st.st_uid == ::geteuid())
    GTEST_SKIP() << "no process of another user to try";
  InjectOptions options;
  options.agent_path = test::test_agent_path();
  auto report = inject_agent(1, options);
  ASSERT_FALSE(report.ok());
  expect_explained_refusal(report.error(), 1);
}

bool readable_by_everyone(const std::string &path) {
  // Every directory on the way searchable, the file readable, by others.
  std::string prefix;
  size_t pos = 0;
  while ((pos = path.find('/', pos + 1)) != std::string::npos) {
    struct stat st;
    if (::stat(path.substr(0, pos).c_str(), &st) != 0 ||
        !(st.st_mode & S_IXOTH))
      return false;
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IROTH);
}

TEST(InjectPermissions, RootInjectsIntoAnotherUsersProcess) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root";
  if (::access("/usr/bin/setpriv", X_OK) != 0)
    GTEST_SKIP() << "no setpriv to start a process as nobody";
  if (!readable_by_everyone(test::test_agent_path()))
    GTEST_SKIP() << "the test agent is not readable by nobody";
  auto target = test::TestProcess::start({"/usr/bin/setpriv", "--reuid=65534",
                                          "--regid=65534", "--clear-groups",
                                          test::prog_path("counter_loop")});
  ASSERT_EQ(target.read_line(), "tick 0");
  InjectOptions options;
  options.agent_path = test::test_agent_path();
  options.entry_symbol = "ubtrace_agent_attach";
  options.entry_argument = "return:5";
  auto report = inject_agent(target.pid(), options);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->entry_result, 5);
  target.write_stdin("q");
  EXPECT_TRUE(target.wait_for_line("done"));
  EXPECT_EQ(target.wait_exit(), 0);
}

} // namespace
} // namespace ubtrace::runtime::inject
