// The CLI's end of the agent channel: how the agent finds the CLI, and
// waiting for it to speak. The messages themselves (Hello, Go, programs,
// hooks) are the agent protocol's, runtime/agent/protocol.h; this layer
// only carries them.
//
// The contract with the agent (runtime/agent/agent.cpp implements it):
//   -c  The CLI starts the program with UBTRACE_AGENT_FD=<fd> (inherited,
//       not close-on-exec), one end of a SOCK_SEQPACKET socketpair, and the
//       agent in LD_PRELOAD (spawn.h). The agent's constructor unsets the
//       variable, sets FD_CLOEXEC on the fd, sends Hello and waits for Go
//       before it returns, so main runs with the probes in place; if the
//       channel closes first, it returns and the program runs untraced.
//   -p  The CLI listens on an abstract unix socket (SOCK_SEQPACKET) whose
//       name nobody can predict, "@ubtrace-agent.<PID>.<32 hex digits from
//       getrandom>", and injects the agent (injector.h) with
//       entry_argument() as the entry's argument: the name, the CLI's pid
//       and uid (protocol.h's AttachArgument). The agent connects there and
//       speaks only if the listener's SO_PEERCRED is that pid and uid; the
//       CLI accepts only the target (SO_PEERCRED). No other user can bind
//       the name first (which blocked -p when it was "@ubtrace-agent.<PID>")
//       nor answer the agent; one CLI at a time per process is the agent's
//       rule (a second is told it is busy).
//   -c, its execs (and --follow's whole tree): the CLI listens as for -p
//       and names the listener in UBTRACE_FOLLOW with a token; an exec'd
//       program's agent connects and sends the token before its Hello
//       (runtime/agent/protocol.h); AgentListener::accept_now() takes
//       such connections from any pid, and the backend checks the token.
//
// Why the constructor waits for Go rather than the program being started
// stopped (PTRACE_TRACEME, SIGSTOP): the probes are installed by the agent
// itself, so the agent's constructor is the one place that is both inside
// the process and before main; a ptrace stop would hold the process before
// the agent even exists, and would leave the CLI as its tracer (taking all
// its signals, keeping gdb and strace away). A program the loader will not
// preload into (static, setuid) never speaks: spawn.h refuses those before
// starting them, and waiting for the agent ends when the program exits.
#pragma once

#include "runtime/inject/deadline.h"
#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"

#include <optional>
#include <string>
#include <sys/socket.h>
#include <sys/types.h>

namespace ubtrace::runtime::inject {

// The socket type of the channel (message boundaries, fd passing).
inline constexpr int kAgentChannelType = SOCK_SEQPACKET;

// Why the agent's inject entry started no session, from its result
// (protocol.h's kInject* codes).
std::string inject_entry_failure(int code);

// Whether the peer of a connected channel has closed its end and nothing
// is left to read (a message still queued is not a hangup yet).
bool channel_closed(int fd);

// A connected socket to one agent.
class AgentChannel {
public:
  explicit AgentChannel(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  UniqueFd release_fd() { return std::move(fd_); }

  // Waits until the agent has sent something (its Hello). Fails at the
  // deadline, when the agent's end closes without a message, or when
  // `exit_fd` (a pidfd; -1 = none) becomes readable first, i.e. the
  // process exited.
  Result<void> wait_readable(const Deadline &deadline, int exit_fd = -1);
  // The agent hung up (its process exited, or the agent lost its end of
  // the channel and went quiet) and every message it sent was read.
  bool closed() const { return channel_closed(fd_.get()); }

private:
  UniqueFd fd_;
};

// 32 hex digits from getrandom: a name or token nobody can predict.
Result<std::string> random_hex128();

// A listening unix socket for the injected agent. "@name" is an abstract
// socket (no file, scoped to the network namespace); anything else is a
// filesystem path, unlinked again by the destructor.
class AgentListener {
public:
  // At a fresh unpredictable name for the agent of `pid`, in its network
  // namespace (entered by a thread of ours: needs the right to, as root).
  static Result<AgentListener> create_for(pid_t pid);
  static Result<AgentListener> create_at(const std::string &address);

  const std::string &address() const { return address_; }
  // What the injector passes to agent::kInjectEntry: this address and the
  // credentials the agent must find on it (this process's pid and uid as
  // the target sees them: pid 0 from inside a PID namespace of its own,
  // the uid through its user namespace's map).
  std::string entry_argument() const;
  int fd() const { return fd_.get(); }

  // Accepts the connection of process `pid`: others (SO_PEERCRED) are
  // closed and ignored. Fails at the deadline or when `exit_fd` becomes
  // readable first.
  Result<AgentChannel> accept(pid_t pid, const Deadline &deadline,
                              int exit_fd = -1);
  // --follow: a connection that waits now, from whatever process (its
  // SO_PEERCRED pid in `pid`); nullopt when none waits. Never blocks.
  std::optional<AgentChannel> accept_now(pid_t &pid);

  ~AgentListener();
  AgentListener(AgentListener &&) = default;
  AgentListener &operator=(AgentListener &&) = default;

private:
  AgentListener(UniqueFd fd, std::string address)
      : fd_(std::move(fd)), address_(std::move(address)) {}

  UniqueFd fd_;
  std::string address_;
  pid_t target_ = 0; // create_for's: whose view entry_argument() takes
};

} // namespace ubtrace::runtime::inject
