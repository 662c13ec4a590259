// Defect 11 (and its siblings): the agent's descriptors live in the
// program's descriptor table. A daemon that closes every descriptor and
// fills the table with its own sockets, or closes exactly the agent's and
// puts its own socket at that number, must find only its own bytes in its
// sockets; the trace goes on until the agent notices, then the agent goes
// quiet and the CLI says so; nobody hangs or crashes.
#include "tests/faults/channel/support.h"

#include <csignal>
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace ubtrace::faults {
namespace {

std::string script() {
  return "uprobe:" + fault_prog("chan_closer") +
         ":chan_work { @work = count(); } uprobe:" +
         fault_prog("libchan_lib.so") + ":chan_lib_fn { @lib = count(); }";
}

struct Outcome {
  std::string out, err;
  int status = -1;
};

// What the daemon said about its sockets, and how ubtrace ended.
void expect_clean(const Outcome &o) {
  EXPECT_NE(o.out.find("\nclean "), std::string::npos) << o.out << o.err;
  EXPECT_EQ(o.out.find("dirty"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\ndone\n"), std::string::npos) << o.out << o.err;
  ASSERT_TRUE(WIFEXITED(o.status)) << describe_status(o.status) << o.err;
  // Probes ran before the daemon took the descriptors.
  EXPECT_NE(o.out.find("@work: "), std::string::npos) << o.out << o.err;
}

Outcome trace_command(const std::string &mode) {
  Child cli = Child::start({ubtrace_binary(), "-c",
                            fault_prog("chan_closer") + " " + mode + " " +
                                fault_prog("libchan_lib.so"),
                            "-e", script()});
  auto status = cli.wait_exit(60s);
  Outcome o;
  EXPECT_TRUE(status) << "ubtrace -c did not end";
  o.status = status ? *status : -1;
  o.out = cli.all_stdout();
  o.err = cli.all_stderr();
  return o;
}

// The CLI says why the probes stopped.
void expect_said(const Outcome &o) {
  EXPECT_NE(o.err.find("hung up: its probes no longer fire (the process "
                       "closed the agent's descriptors)"),
            std::string::npos)
      << o.err;
}

TEST(ChannelFds, DaemonThatClosesAndFillsEveryDescriptor) {
  Outcome o = trace_command("all");
  expect_clean(o);
  expect_said(o);
}

TEST(ChannelFds, DaemonThatTakesTheAgentsExactDescriptor) {
  Outcome o = trace_command("exact");
  expect_clean(o);
  expect_said(o);
  EXPECT_NE(o.out.find("took "), std::string::npos) << o.out;
}

// -p: the daemon already runs; it takes the descriptor after the attach.
TEST(ChannelFds, AttachedDaemonThatTakesTheAgentsDescriptor) {
  Child daemon = Child::start({fault_prog("chan_closer"), "exact",
                               fault_prog("libchan_lib.so"), "wait"});
  auto ready = daemon.wait_for_line("ready ");
  ASSERT_TRUE(ready) << daemon.all_stderr();
  Child cli = Child::start(
      {ubtrace_binary(), "-p", std::to_string(daemon.pid()), "-e", script()});
  auto attached = cli.wait_for_line("Attached ", 30s, Child::Stderr);
  ASSERT_TRUE(attached) << cli.all_stderr();
  daemon.write_stdin("go\n");
  auto exit = daemon.wait_exit(30s);
  ASSERT_TRUE(exit);
  std::string daemon_out = daemon.all_stdout();
  EXPECT_NE(daemon_out.find("clean "), std::string::npos) << daemon_out;
  EXPECT_EQ(daemon_out.find("dirty"), std::string::npos) << daemon_out;
  EXPECT_NE(daemon_out.find("took "), std::string::npos) << daemon_out;
  auto status = cli.wait_exit(60s);
  ASSERT_TRUE(status) << "ubtrace -p did not end after its target";
  EXPECT_TRUE(WIFEXITED(*status)) << describe_status(*status);
}

} // namespace
} // namespace ubtrace::faults

namespace ubtrace::faults {
namespace {

// A forked child gets a copy of the descriptor table: the agent's copies
// are closed in it (it has no agent thread to serve them).
TEST(ChannelFds, ForkedChildHoldsNoAgentDescriptor) {
  Child cli = Child::start(
      {ubtrace_binary(), "-c", fault_prog("chan_forker"), "-e",
       "uprobe:" + fault_prog("chan_forker") + ":chan_work { @ = count(); }"});
  auto status = cli.wait_exit(60s);
  ASSERT_TRUE(status);
  std::string out = cli.all_stdout(), err = cli.all_stderr();
  EXPECT_EQ(describe_status(*status), "exited 0") << err;
  EXPECT_NE(out.find("child sockets 0\n"), std::string::npos) << out << err;
  // The parent's agent keeps its channel.
  EXPECT_NE(out.find("parent sockets 1\n"), std::string::npos) << out << err;
}

} // namespace
} // namespace ubtrace::faults

namespace ubtrace::faults {
namespace {

size_t open_descriptors(pid_t pid) {
  DIR *d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  size_t n = 0;
  while (d && readdir(d))
    ++n;
  if (d)
    closedir(d);
  return n;
}

// The traced process writes on the agent's channel itself: forged notices
// for libraries that do not exist, replies nobody asked for, descriptors
// attached, without end. The CLI takes a bounded number per round of its
// loop (so it still ends on SIGTERM) and closes every descriptor that comes.
TEST(ChannelFds, TargetFloodingTheChannelDoesNotTakeTheCli) {
  Child cli = Child::start(
      {ubtrace_binary(), "-c", fault_prog("chan_flooder"), "-e",
       "uprobe:" + fault_prog("chan_flooder") +
           ":chan_work { @ = count(); } "
           "uprobe:" +
           fault_prog("libchan_lib.so") + ":chan_lib_fn { @lib = 1; }"});
  ASSERT_TRUE(cli.wait_for_line("flooding ", 60s)) << cli.all_stderr();
  // Thousands of descriptors were sent; the CLI kept none.
  EXPECT_LT(open_descriptors(cli.pid()), 100u);
  cli.signal(SIGTERM);
  auto status = cli.wait_exit(30s);
  ASSERT_TRUE(status) << "ubtrace did not end on SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status)) << describe_status(*status);
  EXPECT_NE(cli.all_stdout().find("@: "), std::string::npos);
}

} // namespace
} // namespace ubtrace::faults
