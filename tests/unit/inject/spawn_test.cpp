// -c: the program starts with the test agent preloaded; the agent's
// constructor says Hello and waits for Go before main runs. The messages
// are framed like runtime/agent/protocol.h's (header {type, size} and a
// payload in one SOCK_SEQPACKET message).
#include "runtime/inject/spawn.h"
#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

// The program's stdout, through a pipe.
struct Captured {
  int read_fd = -1, write_fd = -1;
  Captured() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_fd = fds[0];
    write_fd = fds[1];
  }
  ~Captured() {
    if (read_fd >= 0)
      ::close(read_fd);
    if (write_fd >= 0)
      ::close(write_fd);
  }
  // Everything the program wrote, as "key=value" lines.
  std::map<std::string, std::string> lines() {
    ::close(write_fd);
    write_fd = -1;
    std::string text;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(read_fd, chunk, sizeof chunk)) > 0)
      text.append(chunk, static_cast<size_t>(n));
    std::map<std::string, std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      std::string line = text.substr(pos, eol - pos);
      pos = eol == std::string::npos ? text.size() : eol + 1;
      size_t eq = line.find('=');
      if (eq != std::string::npos)
        out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
  }
};

constexpr uint32_t kHello = 1, kGo = 14, kToken = 100;

void send_message(AgentChannel &channel, uint32_t type,
                  const std::string &payload = "") {
  std::string bytes(8, '\0');
  uint32_t header[2] = {type, static_cast<uint32_t>(payload.size())};
  std::memcpy(bytes.data(), header, sizeof header);
  bytes += payload;
  ASSERT_EQ(::send(channel.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

struct Hello {
  uint32_t type = 0, size = 0, version = 0, pid = 0, waiting = 0, pad = 0;
};

Hello receive_hello(AgentChannel &channel) {
  Hello hello;
  ssize_t n = ::recv(channel.fd(), &hello, sizeof hello, MSG_DONTWAIT);
  EXPECT_EQ(n, static_cast<ssize_t>(sizeof hello));
  return hello;
}

SpawnOptions options_for(const std::string &command_text, const Captured &out) {
  auto command = split_command(command_text);
  EXPECT_TRUE(command.ok()) << (command.ok() ? "" : command.error());
  SpawnOptions options;
  options.command = command.ok() ? *command : CommandLine{};
  options.agent_path = test::test_agent_path();
  options.stdout_fd = out.write_fd;
  return options;
}

TEST(Spawn, AgentRunsBeforeMainAndWaitsForGo) {
  Captured out;
  auto options = options_for(test::prog_path("preload_probe") +
                                 " 'two words' \"q\\\"uote\" exit=3",
                             out);
  auto process = spawn_with_agent(options);
  ASSERT_TRUE(process.ok()) << process.error();
  auto spoke = process->await_agent(10s);
  ASSERT_TRUE(spoke.ok()) << spoke.error();
  Hello hello = receive_hello(process->channel());
  EXPECT_EQ(hello.type, kHello);
  EXPECT_EQ(hello.size, 16u);
  EXPECT_EQ(hello.version, 1u);
  EXPECT_EQ(hello.pid, static_cast<uint32_t>(process->pid()));
  EXPECT_EQ(hello.waiting, 1u);

  // main has not run: the program holds in the constructor.
  EXPECT_FALSE(process->try_wait()->has_value());
  std::string token = "token-" + std::to_string(process->pid());
  send_message(process->channel(), kToken, token);
  send_message(process->channel(), kGo);

  auto status = process->wait();
  ASSERT_TRUE(status.ok()) << status.error();
  EXPECT_EQ(status->describe(), "exited with code 3");
  auto lines = out.lines();
  EXPECT_EQ(lines["pid"], std::to_string(process->pid()));
  // state 2: the token and the go arrived before main printed this.
  EXPECT_EQ(lines["agent_state"], "2");
  EXPECT_EQ(lines["token"], token);
  // The agent took the variable out of the environment.
  EXPECT_EQ(lines["env_fd"], "(unset)");
  EXPECT_EQ(lines["argv[1]"], "[two words]");
  EXPECT_EQ(lines["argv[2]"], "[q\"uote]");
  EXPECT_EQ(lines["argv[3]"], "[exit=3]");
  EXPECT_EQ(lines["argv[0]"], "[" + test::prog_path("preload_probe") + "]");
}

TEST(Spawn, AppendsToAnExistingPreloadAndAppliesAssignments) {
  Captured out;
  auto options = options_for(
      "UBT_PROBE_VAR='a b' LD_PRELOAD=" + test::other_library_path() + " " +
          test::prog_path("preload_probe"),
      out);
  auto process = spawn_with_agent(options);
  ASSERT_TRUE(process.ok()) << process.error();
  ASSERT_TRUE(process->await_agent(10s).ok());
  receive_hello(process->channel());
  send_message(process->channel(), kToken, "x");
  send_message(process->channel(), kGo);
  ASSERT_EQ(process->wait()->shell_code(), 0);
  auto lines = out.lines();
  EXPECT_EQ(lines["preload"],
            test::other_library_path() + ":" + test::test_agent_path());
  EXPECT_EQ(lines["other"], "1234"); // the first preload still loads
  EXPECT_EQ(lines["agent_state"], "2");
  EXPECT_EQ(lines["var"], "a b");
}

TEST(Spawn, EnvironmentIsBuiltAsDocumented) {
  CommandLine command{{"A=1", "LD_PRELOAD=/x.so"}, {"prog"}};
  // UBTRACE_AGENT_FD is replaced; LD_PRELOAD, if any, extended.
  auto env = agent_environment({"A=0", "B=2", "UBTRACE_AGENT_FD=99"}, command,
                               "/agent.so", 7);
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "B=2", "UBTRACE_AGENT_FD=7",
                                           "LD_PRELOAD=/x.so:/agent.so"}));
  auto fresh = agent_environment({}, CommandLine{{}, {"prog"}}, "/agent.so", 5);
  EXPECT_EQ(fresh, (std::vector<std::string>{"LD_PRELOAD=/agent.so",
                                             "UBTRACE_AGENT_FD=5"}));
  // The agent's own assignments (--follow's) come last, over the user's.
  auto follow = agent_environment({"UBTRACE_FOLLOW=old"}, command, "/agent.so",
                                  5, {"UBTRACE_FOLLOW=token address"});
  EXPECT_EQ(follow, (std::vector<std::string>{
                        "UBTRACE_FOLLOW=token address", "A=1",
                        "LD_PRELOAD=/x.so:/agent.so", "UBTRACE_AGENT_FD=5"}));
}

TEST(Spawn, PathLookupUsesTheProgramsPath) {
  Captured out;
  auto options = options_for(
      "PATH=" + std::string(UBT_INJECT_PROGS) + " preload_probe", out);
  auto process = spawn_with_agent(options);
  ASSERT_TRUE(process.ok()) << process.error();
  EXPECT_EQ(process->program(), test::prog_path("preload_probe"));
  ASSERT_TRUE(process->await_agent(10s).ok());
}

TEST(Spawn, CommandNotFound) {
  Captured out;
  auto options = options_for("ubt-no-such-command --flag", out);
  auto process = spawn_with_agent(options);
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.error(), "command not found: ubt-no-such-command");
}

TEST(Spawn, StaticProgramIsRefusedBeforeStarting) {
  if (!UBT_INJECT_HAVE_STATIC)
    GTEST_SKIP() << "no libc.a to link a static program with";
  Captured out;
  auto process =
      spawn_with_agent(options_for(test::prog_path("static_prog"), out));
  ASSERT_FALSE(process.ok());
  EXPECT_NE(process.error().find("is statically linked"), std::string::npos)
      << process.error();
}

TEST(Spawn, MissingAgentIsAnError) {
  Captured out;
  auto options = options_for(test::prog_path("preload_probe"), out);
  options.agent_path = "/no/such/agent.so";
  auto process = spawn_with_agent(options);
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.error(),
            "agent /no/such/agent.so: No such file or directory");
}

TEST(Spawn, ExitBeforeHelloIsReported) {
  // A library that never says hello stands in for an agent that did not
  // load: the program runs to its end and the wait says so.
  Captured out;
  auto options = options_for(test::prog_path("preload_probe") + " exit=5", out);
  options.agent_path = test::other_library_path();
  auto process = spawn_with_agent(options);
  ASSERT_TRUE(process.ok()) << process.error();
  auto spoke = process->await_agent(10s);
  ASSERT_FALSE(spoke.ok());
  EXPECT_EQ(spoke.error(), test::prog_path("preload_probe") +
                               " exited with code 5 before the agent spoke "
                               "(it did not load the agent)");
  EXPECT_EQ(process->wait()->describe(), "exited with code 5");
}

TEST(Spawn, HelloTimesOut) {
  Captured out;
  auto options = options_for(test::prog_path("counter_loop"), out);
  options.agent_path = test::other_library_path();
  int input[2]; // counter_loop runs until its stdin has something
  ASSERT_EQ(::pipe2(input, O_CLOEXEC), 0);
  options.stdin_fd = input[0];
  auto process = spawn_with_agent(options);
  ::close(input[0]);
  ASSERT_TRUE(process.ok()) << process.error();
  auto spoke = process->await_agent(200ms);
  ASSERT_FALSE(spoke.ok());
  EXPECT_EQ(spoke.error(), "timed out waiting for the agent (" +
                               test::prog_path("counter_loop") + ", pid " +
                               std::to_string(process->pid()) + ")");
  ASSERT_TRUE(process->kill(SIGKILL).ok());
  EXPECT_EQ(process->wait()->describe(), "killed by signal 9 (SIGKILL)");
  ::close(input[1]);
}

TEST(Spawn, ProgramRunsUntracedWhenTheCliGoesAway) {
  Captured out;
  auto process = spawn_with_agent(
      options_for(test::prog_path("preload_probe") + " exit=0", out));
  ASSERT_TRUE(process.ok()) << process.error();
  ASSERT_TRUE(process->await_agent(10s).ok());
  // The CLI's end closes without Go: the constructor returns, main runs.
  process->channel().release_fd().reset();
  EXPECT_EQ(process->wait()->describe(), "exited with code 0");
  auto lines = out.lines();
  EXPECT_EQ(lines["agent_state"], "1");
  EXPECT_EQ(lines["token"], "");
}

TEST(Spawn, PidfdReportsTheExit) {
  Captured out;
  auto process = spawn_with_agent(
      options_for(test::prog_path("preload_probe") + " exit=0", out));
  ASSERT_TRUE(process.ok()) << process.error();
  if (process->pidfd() < 0)
    GTEST_SKIP() << "no pidfd_open on this kernel";
  ASSERT_TRUE(process->await_agent(10s).ok());
  receive_hello(process->channel());
  send_message(process->channel(), kGo);
  // What the CLI's main loop does: poll the pidfd, then reap.
  EXPECT_TRUE(test::wait_until([&] {
    pollfd fd{process->pidfd(), POLLIN, 0};
    return ::poll(&fd, 1, 0) == 1;
  }));
  EXPECT_EQ(process->wait()->describe(), "exited with code 0");
}

TEST(Spawn, DestructorKillsAndReapsAnUnfinishedProgram) {
  Captured out;
  pid_t pid = 0;
  {
    auto process =
        spawn_with_agent(options_for(test::prog_path("counter_loop"), out));
    ASSERT_TRUE(process.ok()) << process.error();
    pid = process->pid();
    ASSERT_TRUE(process->await_agent(10s).ok());
  }
  // Reaped: no zombie left with that pid.
  EXPECT_NE(::kill(pid, 0), 0);
}

} // namespace
} // namespace ubtrace::runtime::inject
