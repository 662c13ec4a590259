#include "runtime/inject/spawn.h"

#include "runtime/agent/protocol.h"
#include "runtime/inject/executable.h"
#include "runtime/inject/sys_error.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ubtrace::runtime::inject {
namespace {

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

void set_variable(std::vector<std::string> &env, const std::string &entry) {
  std::string_view name = name_of(entry);
  for (std::string &existing : env)
    if (name_of(existing) == name) {
      existing = entry;
      return;
    }
  env.push_back(entry);
}

std::optional<std::string> get_variable(const std::vector<std::string> &env,
                                        std::string_view name) {
  for (const std::string &entry : env)
    if (name_of(entry) == name && entry.size() > name.size())
      return entry.substr(name.size() + 1);
  return std::nullopt;
}

Result<std::string> absolute_agent_path(const std::string &path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved))
    return sys_error("agent " + path, errno);
  std::string absolute = resolved;
  // LD_PRELOAD splits on both.
  if (absolute.find_first_of(" :") != std::string::npos)
    return make_error("agent path " + absolute +
                      " contains a space or a colon, which LD_PRELOAD "
                      "cannot express");
  if (::access(absolute.c_str(), R_OK) != 0)
    return sys_error("agent " + absolute, errno);
  return absolute;
}

// Everything the child needs, prepared before fork: after fork only
// async-signal-safe calls are allowed (the CLI may have threads).
struct ChildPlan {
  std::string program;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char *> argv, envp;
  int agent_fd = -1;
  int error_pipe = -1;
  int stdio[3] = {-1, -1, -1};
  bool terminate_with_cli = true;
  bool new_process_group = false;
  bool trace_me = false;
  pid_t parent = 0;
};

// What the child writes on the error pipe when it could not ask to be
// traced (-errno), before going on; an errno (> 0) is its exec's failure.
int traceme_failed(int err) {
  return -err;
}

std::vector<char *> c_strings(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void fail_in_child(int error_pipe, int err) {
  ssize_t ignored = ::write(error_pipe, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

[[noreturn]] void run_child(const ChildPlan &plan) {
  if (plan.new_process_group && ::setpgid(0, 0) != 0)
    fail_in_child(plan.error_pipe, errno);
  if (plan.terminate_with_cli) {
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
      fail_in_child(plan.error_pipe, errno);
    if (::getppid() != plan.parent) // the CLI died before the prctl
      ::_exit(127);
  }
  for (int target = 0; target < 3; ++target) {
    if (plan.stdio[target] < 0)
      continue;
    if (::dup2(plan.stdio[target], target) < 0)
      fail_in_child(plan.error_pipe, errno);
  }
  // The agent's end was created close-on-exec; only the program keeps it.
  if (::fcntl(plan.agent_fd, F_SETFD, 0) != 0)
    fail_in_child(plan.error_pipe, errno);
  // Last: the parent follows from the exec on (follow_loader).
  if (plan.trace_me && ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
    int note = traceme_failed(errno);
    ssize_t ignored = ::write(plan.error_pipe, &note, sizeof note);
    (void)ignored;
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  fail_in_child(plan.error_pipe, errno);
}

} // namespace

std::vector<std::string>
agent_environment(std::vector<std::string> base, const CommandLine &command,
                  const std::string &agent_path, int agent_fd,
                  const std::vector<std::string> &agent_env) {
  for (const std::string &assignment : command.env)
    set_variable(base, assignment);
  auto preload = get_variable(base, "LD_PRELOAD");
  set_variable(base, "LD_PRELOAD=" + (preload && !preload->empty()
                                          ? *preload + ":" + agent_path
                                          : agent_path));
  set_variable(base,
               std::string(agent::kFdEnv) + "=" + std::to_string(agent_fd));
  for (const std::string &assignment : agent_env)
    set_variable(base, assignment);
  return base;
}

Result<SpawnedProcess> spawn_with_agent(const SpawnOptions &options) {
  if (options.command.argv.empty())
    return make_error("empty command");
  auto agent = absolute_agent_path(options.agent_path);
  if (!agent)
    return std::move(agent).take_error();

  std::vector<std::string> base;
  if (options.environment)
    base = *options.environment;
  else
    for (char **e = environ; e && *e; ++e)
      base.emplace_back(*e);

  // The lookup uses the PATH the program will get, assignments included.
  std::vector<std::string> lookup_env = base;
  for (const std::string &assignment : options.command.env)
    set_variable(lookup_env, assignment);
  auto program = find_executable(options.command.argv[0],
                                 get_variable(lookup_env, "PATH"));
  if (!program)
    return std::move(program).take_error();
  if (auto ok = check_preloadable(*program); !ok)
    return std::move(ok).take_error();

  int pair[2];
  if (::socketpair(AF_UNIX, kAgentChannelType | SOCK_CLOEXEC, 0, pair) != 0)
    return sys_error("socketpair", errno);
  UniqueFd cli_end(pair[0]), agent_end(pair[1]);
  if (agent_end.get() < 3) { // would be clobbered by the stdio dup2s
    int moved = ::fcntl(agent_end.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
      return sys_error("fcntl", errno);
    agent_end.reset(moved);
  }
  int error_fds[2];
  if (::pipe2(error_fds, O_CLOEXEC) != 0)
    return sys_error("pipe2", errno);
  UniqueFd error_read(error_fds[0]), error_write(error_fds[1]);

  ChildPlan plan;
  plan.program = *program;
  plan.argv_storage = options.command.argv;
  plan.env_storage = agent_environment(std::move(base), options.command, *agent,
                                       agent_end.get(), options.agent_env);
  plan.argv = c_strings(plan.argv_storage);
  plan.envp = c_strings(plan.env_storage);
  plan.agent_fd = agent_end.get();
  plan.error_pipe = error_write.get();
  plan.stdio[0] = options.stdin_fd;
  plan.stdio[1] = options.stdout_fd;
  plan.stdio[2] = options.stderr_fd;
  plan.terminate_with_cli = options.terminate_with_cli;
  plan.new_process_group = options.new_process_group;
  plan.trace_me = options.follow_loader;
  plan.parent = ::getpid();

  ExecCall exec{*program, plan.argv_storage, plan.env_storage, 0, {}};
  struct timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  exec.at_ns = uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
  pid_t pid = ::fork();
  if (pid < 0)
    return sys_error("fork", errno);
  if (pid == 0)
    run_child(plan);

  agent_end.reset();
  error_write.reset();
  // Until the exec closes the pipe: its failure, or the trace's.
  int child_errno = 0, traceme_errno = 0;
  for (;;) {
    int note = 0;
    ssize_t n = ::read(error_read.get(), &note, sizeof note);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < ssize_t(sizeof note))
      break;
    if (note < 0) {
      traceme_errno = -note;
      continue;
    }
    child_errno = note;
    break;
  }
  if (child_errno) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return sys_error("cannot execute " + *program, child_errno);
  }

  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (options.follow_loader && traceme_errno == 0) {
    auto start = std::chrono::steady_clock::now();
    exec.loader = follow_loader(pid, pidfd.get(), std::chrono::seconds(10));
    exec.loader.followed_ns =
        uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    mark_ubtraces_calls(exec.loader, *program, {*agent});
  } else if (options.follow_loader) {
    exec.loader.missing = std::string("ptrace(PTRACE_TRACEME) failed: ") +
                          ::strerror(traceme_errno) +
                          " (is ubtrace itself traced, or ptrace forbidden?)";
  }
  std::optional<int> ended = exec.loader.ended;
  SpawnedProcess spawned(pid, std::move(pidfd),
                         AgentChannel(std::move(cli_end)), std::move(exec));
  if (ended)
    spawned.status_ = ExitStatus::from_wait_status(*ended);
  return spawned;
}

SpawnedProcess::SpawnedProcess(SpawnedProcess &&other) noexcept
    : pid_(other.pid_), pidfd_(std::move(other.pidfd_)),
      channel_(std::move(other.channel_)), exec_(std::move(other.exec_)),
      status_(other.status_), owned_(other.owned_) {
  other.owned_ = false;
}

SpawnedProcess::~SpawnedProcess() {
  if (!owned_ || status_)
    return;
  ::kill(pid_, SIGKILL);
  (void)wait();
}

Result<void> SpawnedProcess::await_agent(std::chrono::milliseconds timeout) {
  Deadline deadline(timeout);
  Result<void> spoke = make_error("timed out waiting for the agent");
  if (pidfd_.valid()) {
    spoke = channel_.wait_readable(deadline, pidfd_.get());
  } else {
    // No pidfd: look for an exit between short waits.
    for (;;) {
      Deadline slice(std::chrono::milliseconds(
          std::min(100, std::max(deadline.remaining_ms(), 1))));
      spoke = channel_.wait_readable(slice);
      if (spoke || deadline.expired())
        break;
      auto exited = try_wait();
      if (exited && *exited)
        break;
    }
  }
  if (spoke)
    return {};
  // Wait for the exit a closed channel announces (the pidfd may lag).
  for (int i = 0; i < 100; ++i) {
    auto exited = try_wait();
    if (exited && *exited)
      return make_error(exec_.program + " " + (*exited)->describe() +
                        " before the agent spoke (it did not load the "
                        "agent)");
    if (spoke.error().find("timed out") != std::string::npos)
      break;
    ::usleep(1000);
  }
  return make_error(spoke.error() + " (" + exec_.program + ", pid " +
                    std::to_string(pid_) + ")");
}

Result<ExitStatus> SpawnedProcess::wait() {
  if (status_)
    return *status_;
  int status = 0;
  for (;;) {
    pid_t got = ::waitpid(pid_, &status, 0);
    if (got == pid_)
      break;
    if (got < 0 && errno == EINTR)
      continue;
    return sys_error("waitpid " + std::to_string(pid_), errno);
  }
  status_ = ExitStatus::from_wait_status(status);
  return *status_;
}

Result<std::optional<ExitStatus>> SpawnedProcess::try_wait() {
  if (status_)
    return std::optional<ExitStatus>(*status_);
  int status = 0;
  pid_t got = ::waitpid(pid_, &status, WNOHANG);
  if (got < 0)
    return sys_error("waitpid " + std::to_string(pid_), errno);
  if (got == 0)
    return std::optional<ExitStatus>();
  status_ = ExitStatus::from_wait_status(status);
  return std::optional<ExitStatus>(*status_);
}

Result<std::optional<ExitStatus>>
SpawnedProcess::wait_for(std::chrono::milliseconds timeout) {
  Deadline deadline(timeout);
  for (;;) {
    auto st = try_wait();
    if (!st || *st || deadline.expired())
      return st;
    int slice = std::min(50, std::max(deadline.remaining_ms(), 1));
    if (pidfd_.valid()) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      (void)::poll(&p, 1, slice); // readable once it exits; EINTR: again
    } else {
      ::usleep(static_cast<useconds_t>(slice) * 1000);
    }
  }
}

Result<void> SpawnedProcess::kill(int sig) {
  if (status_)
    return make_error("process " + std::to_string(pid_) + " already " +
                      status_->describe());
  if (pidfd_.valid()) {
    if (::syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) != 0)
      return sys_error("kill " + std::to_string(pid_), errno);
    return {};
  }
  if (::kill(pid_, sig) != 0)
    return sys_error("kill " + std::to_string(pid_), errno);
  return {};
}

} // namespace ubtrace::runtime::inject
