// The transport with the real agent (runtime/agent): -c through spawn and
// -p through the injector, each up to the Hello and a request/reply with
// the agent protocol (runtime/agent/protocol.h).
#include "runtime/agent/protocol.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/injector.h"
#include "runtime/inject/spawn.h"
#include "tests/unit/inject/test_support.h"

#include <fcntl.h>
#include <optional>
#include <thread>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

TEST(RealAgent, SpawnedProgramWaitsForGo) {
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  SpawnOptions options;
  options.command =
      *split_command(test::prog_path("preload_probe") + " exit=4");
  options.agent_path = UBT_REAL_AGENT;
  options.stdout_fd = out[1];
  auto process = spawn_with_agent(options);
  ::close(out[1]);
  ASSERT_TRUE(process.ok()) << process.error();
  ASSERT_TRUE(process->await_agent(10s).ok());
  auto hello = agent::recv_message(process->channel().fd(), 10000);
  ASSERT_TRUE(hello.ok()) << hello.error();
  ASSERT_EQ(hello->type, agent::MsgType::Hello);
  agent::HelloMsg h{};
  ASSERT_TRUE(hello->read(h));
  EXPECT_EQ(h.version, agent::kProtocolVersion);
  EXPECT_EQ(h.pid, static_cast<uint32_t>(process->pid()));
  EXPECT_EQ(h.waiting, 1u);
  // Held before main until Go.
  EXPECT_FALSE(process->try_wait()->has_value());
  // Go (its reply is not awaited: the agent releases main before it
  // replies, and this program exits at once, which can take the reply with
  // it).
  ASSERT_TRUE(agent::send_message(process->channel().fd(),
                                  agent::Message{agent::MsgType::Go, {}, -1})
                  .ok());
  EXPECT_EQ(process->wait()->describe(), "exited with code 4");
  char text[4096] = {};
  ssize_t n = ::read(out[0], text, sizeof text - 1);
  ::close(out[0]);
  ASSERT_GT(n, 0);
  // The agent took its variable out of the program's environment.
  EXPECT_NE(std::string(text).find("env_fd=(unset)"), std::string::npos)
      << text;
}

TEST(RealAgent, InjectedAgentConnectsToTheListener) {
  auto target = test::TestProcess::start({test::prog_path("counter_loop")});
  ASSERT_EQ(target.read_line(), "tick 0");
  auto listener = AgentListener::create_for(target.pid());
  ASSERT_TRUE(listener.ok()) << listener.error();
  InjectOptions options;
  options.agent_path = UBT_REAL_AGENT;
  options.entry_symbol = agent::kInjectEntry;
  options.entry_argument = listener->entry_argument();
  auto report = inject_agent(target.pid(), options);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->entry_result, 0);
  auto channel = listener->accept(target.pid(), Deadline(10000ms));
  ASSERT_TRUE(channel.ok()) << channel.error();
  auto hello = agent::recv_message(channel->fd(), 10000);
  ASSERT_TRUE(hello.ok()) << hello.error();
  agent::HelloMsg h{};
  ASSERT_TRUE(hello->read(h));
  EXPECT_EQ(h.pid, static_cast<uint32_t>(target.pid()));
  EXPECT_EQ(h.waiting, 0u);
  std::string error;
  auto stats = agent::request(
      channel->fd(), agent::Message{agent::MsgType::Stats, {}, -1}, &error);
  ASSERT_TRUE(stats.ok()) << stats.error();
  EXPECT_EQ(stats->status, 0) << error;
  // The CLI goes away: the program runs on, untraced, and ends normally.
  channel->release_fd().reset();
  target.write_stdin("q");
  EXPECT_TRUE(target.wait_for_line("done"));
  EXPECT_EQ(target.wait_exit(), 0);
}

// One CLI traces a process at a time; the next is refused with a Hello
// that says so, and once the first hangs up a later one gets a session
// (the library stays loaded: the entry starts it, not the constructor).
struct Injected {
  int entry_result = -100;
  std::optional<AgentChannel> channel;
  agent::HelloMsg hello{};
};

Injected inject_real(pid_t pid) {
  Injected out;
  auto listener = AgentListener::create_for(pid);
  EXPECT_TRUE(listener.ok()) << listener.error();
  if (!listener.ok())
    return out;
  InjectOptions options;
  options.agent_path = UBT_REAL_AGENT;
  options.entry_symbol = agent::kInjectEntry;
  options.entry_argument = listener->entry_argument();
  auto report = inject_agent(pid, options);
  EXPECT_TRUE(report.ok()) << report.error();
  if (!report.ok())
    return out;
  out.entry_result = report->entry_result;
  auto channel = listener->accept(pid, Deadline(10000ms));
  EXPECT_TRUE(channel.ok()) << channel.error();
  if (!channel.ok())
    return out;
  auto hello = agent::recv_message(channel->fd(), 10000);
  EXPECT_TRUE(hello.ok()) << hello.error();
  if (hello.ok())
    EXPECT_TRUE(hello->read(out.hello));
  out.channel.emplace(std::move(*channel));
  return out;
}

TEST(RealAgent, OneCliAtATimeAndAnotherAfterTheFirstLeaves) {
  auto target = test::TestProcess::start({test::prog_path("counter_loop")});
  ASSERT_EQ(target.read_line(), "tick 0");
  Injected first = inject_real(target.pid());
  ASSERT_EQ(first.entry_result, 0);
  EXPECT_EQ(first.hello.busy, 0u);

  Injected second = inject_real(target.pid());
  EXPECT_EQ(second.entry_result, 1);
  EXPECT_EQ(second.hello.busy, 1u);

  // The first CLI leaves; its session ends a moment later.
  first.channel.reset();
  Injected third;
  for (int i = 0; i < 100; i++) {
    third = inject_real(target.pid());
    if (third.entry_result != 1)
      break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(third.entry_result, 0);
  EXPECT_EQ(third.hello.busy, 0u);
  std::string error;
  auto stats = agent::request(
      third.channel->fd(), agent::Message{agent::MsgType::Stats, {}, -1}, &error);
  ASSERT_TRUE(stats.ok()) << stats.error();
  EXPECT_EQ(stats->status, 0) << error;
  third.channel.reset();
  target.write_stdin("q");
  EXPECT_TRUE(target.wait_for_line("done"));
  EXPECT_EQ(target.wait_exit(), 0);
}

} // namespace
} // namespace ubtrace::runtime::inject
