// Starting `ubtrace -c CMD` with the agent preloaded (channel.h has the
// contract with the agent), and reaping it.
//
//   auto cmd = split_command("./app --flag 'two words'");
//   auto proc = spawn_with_agent({.command = *cmd, .agent_path = so});
//   proc->await_agent(10s);           // its constructor sent Hello, waits
//   int fd = proc->channel().fd();    // agent::recv_message: the Hello;
//   ... programs, hooks ...           // agent::send_message: ..., Go
//   poll proc->pidfd(); auto status = proc->wait();
//
// The program is started directly (fork + execve, no shell), after a PATH
// lookup and the checks of executable.h, so "command not found", "is
// statically linked" and friends are reported before anything runs. An
// execve that still fails is reported through a close-on-exec pipe.
#pragma once

#include "runtime/inject/channel.h"
#include "runtime/inject/command_line.h"
#include "runtime/inject/exit_status.h"
#include "runtime/inject/loader_calls.h"
#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

struct SpawnOptions {
  CommandLine command;    // argv (PATH-searched like execvp) and NAME=value
  std::string agent_path; // the agent .so; made absolute
  // The environment to start from; nullopt = this process's.
  std::optional<std::vector<std::string>> environment;
  // Descriptors that become the program's stdin/stdout/stderr (-1 =
  // inherit this process's).
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // SIGTERM to the program when the thread that spawned it dies (as
  // bpftrace does; PR_SET_PDEATHSIG follows the spawning thread).
  bool terminate_with_cli = true;
  // Its own process group (so a terminal's ^C reaches only the CLI).
  bool new_process_group = false;
  // NAME=value assignments for the agent, after the command's own
  // (--follow's UBTRACE_FOLLOW).
  std::vector<std::string> agent_env;
  // Follow the program's system calls from its exec to the agent's start
  // with ptrace (loader_calls.h): ExecCall::loader.
  bool follow_loader = false;
};

// The execve the program was started with, as the child made it: the
// resolved path, the argument and environment strings (the agent's
// variables included), and when (CLOCK_MONOTONIC, just before the fork);
// with follow_loader, the calls that came after it before the agent ran
// (those that loaded ubtrace's libraries marked).
struct ExecCall {
  std::string program;
  std::vector<std::string> argv, envp;
  uint64_t at_ns = 0;
  LoaderCalls loader;
};

class SpawnedProcess {
public:
  pid_t pid() const { return pid_; }
  // Becomes readable when the process exits (pidfd); -1 on kernels without
  // pidfd_open (then poll with try_wait()).
  int pidfd() const { return pidfd_.get(); }
  // The resolved program path that was executed.
  const std::string &program() const { return exec_.program; }
  const ExecCall &exec_call() const { return exec_; }
  AgentChannel &channel() { return channel_; }

  // Waits until the agent has spoken on the channel (its Hello, which the
  // caller reads with the agent protocol). Fails when the process exits
  // first ("... exited with code 0 before the agent spoke": it did not load
  // the agent), or at the timeout.
  Result<void> await_agent(std::chrono::milliseconds timeout);

  // Reaps the process, blocking; the status is kept, so later calls
  // return it again.
  Result<ExitStatus> wait();
  // nullopt while it runs.
  Result<std::optional<ExitStatus>> try_wait();
  // Reaps the process if it exits within `timeout`; nullopt if it still
  // runs then.
  Result<std::optional<ExitStatus>> wait_for(std::chrono::milliseconds timeout);
  Result<void> kill(int sig);
  // Gives up ownership: the destructor will neither kill nor reap.
  void release() { owned_ = false; }

  // Kills (SIGKILL) and reaps a process that is still owned and running.
  ~SpawnedProcess();
  SpawnedProcess(SpawnedProcess &&other) noexcept;
  SpawnedProcess &operator=(SpawnedProcess &&) = delete;

private:
  friend Result<SpawnedProcess> spawn_with_agent(const SpawnOptions &);
  SpawnedProcess(pid_t pid, UniqueFd pidfd, AgentChannel channel, ExecCall exec)
      : pid_(pid), pidfd_(std::move(pidfd)), channel_(std::move(channel)),
        exec_(std::move(exec)) {}

  pid_t pid_;
  UniqueFd pidfd_;
  AgentChannel channel_;
  ExecCall exec_;
  std::optional<ExitStatus> status_;
  bool owned_ = true;
};

Result<SpawnedProcess> spawn_with_agent(const SpawnOptions &options);

// The environment spawn_with_agent gives the program (exposed for tests and
// for -c dry runs): `base` with the command's assignments applied, the
// agent appended to LD_PRELOAD, UBTRACE_AGENT_FD=agent_fd and `agent_env`.
std::vector<std::string>
agent_environment(std::vector<std::string> base, const CommandLine &command,
                  const std::string &agent_path, int agent_fd,
                  const std::vector<std::string> &agent_env = {});

} // namespace ubtrace::runtime::inject
