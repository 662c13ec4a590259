#include "tests/faults/channel/support.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::faults {

std::string build_path(const std::string &relative) {
  const char *dir = std::getenv("UBTRACE_BUILD_DIR");
  return std::string(dir ? dir : "build") + "/" + relative;
}

std::string ubtrace_binary() {
  return build_path("ubtrace");
}
std::string agent_preload() {
  return build_path("libubtrace_preload.so");
}

std::string fault_prog(const std::string &name) {
  const char *dir = std::getenv("UBT_FAULT_PROGS");
  return std::string(dir ? dir : build_path("tests/faults/progs").c_str()) +
         "/" + name;
}

Child Child::start(const std::vector<std::string> &argv,
                   const std::vector<std::string> &env, int keep_fd) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (keep_fd >= 0)
      fcntl(keep_fd, F_SETFD, 0);
    for (const std::string &e : env)
      putenv(const_cast<char *>(e.c_str()));
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  Child c;
  c.pid_ = pid;
  c.in_ = in[1];
  c.out_ = out[0];
  c.err_ = err[0];
  return c;
}

Child::Child(Child &&other) noexcept
    : pid_(other.pid_), in_(other.in_), out_(other.out_), err_(other.err_),
      out_buf_(std::move(other.out_buf_)), err_buf_(std::move(other.err_buf_)),
      seen_out_(std::move(other.seen_out_)),
      seen_err_(std::move(other.seen_err_)), reaped_(other.reaped_),
      status_(other.status_) {
  other.pid_ = -1;
  other.in_ = other.out_ = other.err_ = -1;
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, err_})
    if (fd >= 0)
      close(fd);
}

void Child::pump(int timeout_ms) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
  if (poll(fds, 2, timeout_ms) <= 0)
    return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    int &fd = i == 0 ? out_ : err_;
    if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      (i == 0 ? out_buf_ : err_buf_).append(buf, size_t(n));
    } else if (n == 0) {
      close(fd);
      fd = -1;
    }
  }
}

std::optional<std::string> Child::read_line(std::chrono::milliseconds timeout,
                                            Stream from) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string &buf = from == Stdout ? out_buf_ : err_buf_;
  std::string &seen = from == Stdout ? seen_out_ : seen_err_;
  const int &fd = from == Stdout ? out_ : err_;
  for (;;) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) {
      std::string line = buf.substr(0, nl);
      seen += buf.substr(0, nl + 1);
      buf.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd < 0)
      return std::nullopt;
    pump(int(std::min<long>(left.count(), 100)));
  }
}

std::optional<std::string>
Child::wait_for_line(const std::string &prefix,
                     std::chrono::milliseconds timeout, Stream from) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    auto line = read_line(left, from);
    if (!line)
      return std::nullopt;
    if (line->rfind(prefix, 0) == 0)
      return line;
  }
}

void Child::write_stdin(const std::string &text) {
  if (in_ >= 0 && write(in_, text.data(), text.size()) < 0) {
  }
}

void Child::close_stdin() {
  if (in_ >= 0)
    close(in_);
  in_ = -1;
}

void Child::signal(int sig) {
  if (pid_ > 0 && !reaped_)
    kill(pid_, sig);
}

std::optional<int> Child::wait_exit(std::chrono::milliseconds timeout) {
  if (reaped_)
    return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status;
    pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      reaped_ = true;
      status_ = status;
      return status;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return std::nullopt;
    pump(20); // keep the pipes drained so the child never blocks on them
  }
}

// Up to EOF, or 10 s (a grandchild may hold the pipe open).
std::string Child::all_stdout() {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (out_ >= 0 && std::chrono::steady_clock::now() < deadline)
    pump(100);
  return seen_out_ + out_buf_;
}

std::string Child::all_stderr() {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (err_ >= 0 && std::chrono::steady_clock::now() < deadline)
    pump(100);
  return seen_err_ + err_buf_;
}

std::string describe_status(int status) {
  if (WIFEXITED(status))
    return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

} // namespace ubtrace::faults
