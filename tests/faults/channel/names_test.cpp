// Defect 10 (and its siblings): nobody but the CLI that started or injected
// the agent can be its peer. A squatter on the name ubtrace used to derive
// from the pid blocks nothing; the agent speaks only to the listener its
// entry was told about, and only if that listener is the CLI named there;
// the CLI ignores strangers on its listener; a spawned program's agent
// takes no descriptor but the CLI's channel.
#include "runtime/agent/protocol.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/injector.h"
#include "tests/faults/channel/sockets.h"
#include "tests/faults/channel/support.h"

#include <cstddef>
#include <cstring>
#include <gtest/gtest.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::faults {
namespace {

using runtime::inject::AgentListener;
using runtime::inject::Deadline;

pid_t ready_pid(Child &c) {
  auto line = c.wait_for_line("ready ");
  EXPECT_TRUE(line) << c.all_stderr();
  return line ? static_cast<pid_t>(std::stol(line->substr(6))) : -1;
}

std::string old_name(pid_t pid) {
  return std::string(agent::kSocketPrefix) + std::to_string(pid);
}

// The connection of `pid`'s agent on `listener`, and its Hello (a failure
// if either does not come).
std::optional<runtime::inject::AgentChannel>
greeting(AgentListener &listener, pid_t pid, agent::HelloMsg *hello) {
  auto channel = listener.accept(pid, Deadline(10000ms));
  EXPECT_TRUE(channel.ok()) << channel.error();
  if (!channel.ok())
    return std::nullopt;
  auto m = agent::recv_message(channel->fd(), 10000);
  EXPECT_TRUE(m.ok()) << m.error();
  if (!m.ok() || !m->read(*hello))
    return std::nullopt;
  return std::move(*channel);
}

// chan_entry (it calls the agent's inject entry with the line it reads),
// and a local user listening on the name ubtrace used to derive from its
// pid.
struct EntryTarget {
  Child target = Child::start({fault_prog("chan_entry"), agent_preload()});
  pid_t pid = ready_pid(target);
  int squatter = pid > 0 ? squat(old_name(pid)) : -1;
  ~EntryTarget() {
    if (squatter >= 0)
      close(squatter);
  }
  // What the entry returned for `argument`.
  std::string entry(const std::string &argument) {
    target.write_stdin(argument + "\n");
    auto line = target.wait_for_line("entry ");
    return line ? *line : "no entry: " + target.all_stderr();
  }
};

TEST(ChannelNames, SquatterOnTheOldNameDoesNotBlockAttach) {
  Child target = Child::start({fault_prog("chan_loop")});
  pid_t pid = ready_pid(target);
  ASSERT_GT(pid, 0);
  int squatter = squat(old_name(pid));
  ASSERT_GE(squatter, 0) << "@" << old_name(pid) << " is taken";
  Child cli = Child::start(
      {ubtrace_binary(), "-p", std::to_string(pid), "-e",
       "uprobe:" + fault_prog("chan_loop") +
           ":chan_work { @calls = count(); } interval:ms:300 { exit(); }"});
  auto status = cli.wait_exit(60s);
  ASSERT_TRUE(status) << "ubtrace -p did not end";
  std::string out = cli.all_stdout(), err = cli.all_stderr();
  EXPECT_EQ(describe_status(*status), "exited 0") << err;
  EXPECT_NE(out.find("@calls: "), std::string::npos) << out << err;
  EXPECT_EQ(out.find("@calls: 0\n"), std::string::npos) << out;
  EXPECT_LT(squatter_caller(squatter), 0) << "the agent called the squatter";
  close(squatter);
  target.write_stdin("q\n");
  EXPECT_TRUE(target.wait_for_line("done "));
  auto exit = target.wait_exit();
  ASSERT_TRUE(exit);
  EXPECT_EQ(describe_status(*exit), "exited 0");
}

// The entry's argument names a listener that is not the CLI it claims: the
// agent connects, sees other credentials and says nothing. Nothing reaches
// the old pid-derived name either.
TEST(ChannelNames, AgentSpeaksOnlyToTheCliItsArgumentNames) {
  EntryTarget t;
  ASSERT_GE(t.squatter, 0) << "@" << old_name(t.pid) << " is taken";
  auto listener = AgentListener::create_for(t.pid);
  ASSERT_TRUE(listener.ok()) << listener.error();
  agent::AttachArgument claim;
  claim.address = listener->address();
  claim.cli_pid = static_cast<uint32_t>(getppid()); // not this listener's
  claim.cli_uid = static_cast<uint32_t>(geteuid());
  EXPECT_EQ(t.entry(agent::encode_attach_argument(claim)),
            "entry " + std::to_string(agent::kInjectWrongPeer));
  // It did connect (to check who listens), then hung up without a byte.
  int conn = accept4(listener->fd(), nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0) << "the agent never reached the named listener";
  EXPECT_EQ(bytes_within(conn, 5000), 0) << "the agent spoke to a stranger";
  close(conn);
  EXPECT_LT(squatter_caller(t.squatter), 0) << "the agent called the squatter";
  t.target.close_stdin();
  EXPECT_TRUE(t.target.wait_for_line("done"));
}

TEST(ChannelNames, AgentRefusesAnArgumentItCannotParse) {
  EntryTarget t;
  ASSERT_GE(t.squatter, 0) << "@" << old_name(t.pid) << " is taken";
  EXPECT_EQ(t.entry("connect to whatever"),
            "entry " + std::to_string(agent::kInjectBadArgument));
  EXPECT_LT(squatter_caller(t.squatter), 0) << "the agent called the squatter";
  t.target.close_stdin();
  EXPECT_TRUE(t.target.wait_for_line("done"));
}

TEST(ChannelNames, AgentGreetsTheCliItsArgumentNames) {
  EntryTarget t;
  Child &target = t.target;
  const pid_t pid = t.pid;
  ASSERT_GT(pid, 0);
  auto listener = AgentListener::create_for(pid);
  ASSERT_TRUE(listener.ok()) << listener.error();
  EXPECT_EQ(t.entry(listener->entry_argument()), "entry 0");
  agent::HelloMsg h{};
  auto channel = greeting(*listener, pid, &h);
  ASSERT_TRUE(channel);
  EXPECT_EQ(h.pid, static_cast<uint32_t>(pid));
  EXPECT_EQ(h.busy, 0u);
  channel->release_fd().reset(); // the CLI goes: the program runs on
  target.close_stdin();
  EXPECT_TRUE(target.wait_for_line("done"));
  auto exit = target.wait_exit();
  ASSERT_TRUE(exit);
  EXPECT_EQ(describe_status(*exit), "exited 0");
}

// The CLI's side: a stranger who finds the listener (its name is visible in
// /proc/net/unix once bound) and connects first, with a forged Hello, is
// dropped; the real agent's connection is the one accepted.
TEST(ChannelNames, CliIgnoresAStrangerOnItsListener) {
  Child target = Child::start({fault_prog("chan_loop")});
  pid_t pid = ready_pid(target);
  ASSERT_GT(pid, 0);
  auto listener = AgentListener::create_for(pid);
  ASSERT_TRUE(listener.ok()) << listener.error();
  int stranger = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un addr = abstract_address(listener->address().substr(1), &len);
  ASSERT_EQ(connect(stranger, reinterpret_cast<sockaddr *>(&addr), len), 0);
  agent::HelloMsg forged{agent::kProtocolVersion, uint32_t(pid), 0, 1};
  ASSERT_TRUE(agent::send_message(
      stranger, agent::Message::of(agent::MsgType::Hello, forged)));
  runtime::inject::InjectOptions options;
  options.agent_path = agent_preload();
  options.entry_symbol = agent::kInjectEntry;
  options.entry_argument = listener->entry_argument();
  auto report = runtime::inject::inject_agent(pid, options);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->entry_result, agent::kInjectStarted);
  agent::HelloMsg h{};
  auto channel = greeting(*listener, pid, &h);
  ASSERT_TRUE(channel);
  EXPECT_EQ(h.busy, 0u) << "the forged Hello was taken for the agent's";
  EXPECT_EQ(h.pid, static_cast<uint32_t>(pid));
  close(stranger);
  channel->release_fd().reset();
  target.write_stdin("q\n");
  EXPECT_TRUE(target.wait_for_line("done "));
}

// -c: UBTRACE_AGENT_FD naming anything but the CLI's channel (a stale
// variable, a number the program reuses) is not the agent's to write to.
// The agent used to greet whatever it named, and then wait for a Go that
// never comes: the program hung before main.
void expect_untouched(int theirs, const std::vector<std::string> &argv,
                      int keep) {
  Child prog = Child::start(argv, {}, keep);
  auto main_line = prog.wait_for_line("main");
  EXPECT_TRUE(main_line) << "the program never reached main: "
                         << prog.all_stderr();
  auto exit = prog.wait_exit(20s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(describe_status(*exit), "exited 0");
  EXPECT_LE(bytes_within(theirs, 200), 0) << "the agent wrote to it";
}

TEST(ChannelNames, SpawnedAgentTakesOnlyItsChannel) {
  const std::string preload = "LD_PRELOAD=" + agent_preload();
  // A stream socket: the program's own connection, say.
  int stream[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stream), 0);
  expect_untouched(stream[0],
                   {"/usr/bin/env", preload,
                    "UBTRACE_AGENT_FD=" + std::to_string(stream[1]),
                    fault_prog("chan_fd_env")},
                   stream[1]);
  close(stream[1]);
  close(stream[0]);
  // A channel-like socket whose other end is not the program's parent: a
  // shell between them (the agent's process is the shell's child).
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  expect_untouched(pair[0],
                   {"/bin/sh", "-c",
                    preload + " UBTRACE_AGENT_FD=" + std::to_string(pair[1]) +
                        " " + fault_prog("chan_fd_env") + "; exit $?"},
                   pair[1]);
  close(pair[1]);
  close(pair[0]);
}

} // namespace
} // namespace ubtrace::faults

namespace ubtrace::faults {
namespace {

// The session learns that the agent hung up through the channel (defect
// 12's -p ending, and an agent that went quiet): once its end is closed and
// every message it sent was read, not before.
TEST(ChannelEnd, HangupIsSeenOnceEveryMessageIsRead) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  runtime::inject::AgentChannel channel{runtime::inject::UniqueFd(pair[0])};
  EXPECT_FALSE(channel.closed());
  agent::HelloMsg h{agent::kProtocolVersion, 1, 0, 0};
  ASSERT_TRUE(
      agent::send_message(pair[1], agent::Message::of(agent::MsgType::Hello, h)));
  close(pair[1]);
  EXPECT_FALSE(channel.closed()) << "a message is still waiting";
  ASSERT_TRUE(agent::recv_message(channel.fd(), 1000).ok());
  EXPECT_TRUE(channel.closed());
  auto next = agent::recv_message(channel.fd(), 1000);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error(), agent::kChannelClosed);
}

} // namespace
} // namespace ubtrace::faults
