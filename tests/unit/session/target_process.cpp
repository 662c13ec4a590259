#include "tests/unit/session/target_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ubtrace::session_test {

using Clock = std::chrono::steady_clock;

Result<TargetProcess>
TargetProcess::start(const std::vector<std::string> &argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0)
    return make_error(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return make_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char *> args;
  for (const auto &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return make_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  TargetProcess p;
  p.pid_ = pid;
  p.in_ = in[1];
  p.out_ = out[0];
  return p;
}

TargetProcess::TargetProcess(TargetProcess &&o) noexcept
    : pid_(o.pid_), in_(o.in_), out_(o.out_), buffer_(std::move(o.buffer_)),
      eof_(o.eof_), status_(o.status_) {
  o.pid_ = -1;
  o.in_ = o.out_ = -1;
}

TargetProcess::~TargetProcess() {
  if (pid_ > 0 && !status_) {
    kill(pid_, SIGKILL);
    int st;
    waitpid(pid_, &st, 0);
  }
  if (in_ >= 0)
    close(in_);
  if (out_ >= 0)
    close(out_);
}

std::optional<std::string>
TargetProcess::read_line(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_) {
      if (buffer_.empty())
        return std::nullopt;
      std::string rest = std::move(buffer_);
      buffer_.clear();
      return rest;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    struct pollfd pfd {
      out_, POLLIN, 0
    };
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return std::nullopt;
    char buf[4096];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      eof_ = true;
    else
      buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::vector<std::string>
TargetProcess::read_remaining(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::vector<std::string> lines;
  while (auto line =
             read_line(std::chrono::duration_cast<std::chrono::milliseconds>(
                 deadline - Clock::now())))
    lines.push_back(std::move(*line));
  return lines;
}

void TargetProcess::close_stdin() {
  if (in_ >= 0)
    close(in_);
  in_ = -1;
}

bool TargetProcess::running() {
  if (status_)
    return false;
  int st;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

std::string TargetProcess::state(std::chrono::milliseconds settle) {
  if (!wait_exit(settle))
    return "running";
  if (WIFSIGNALED(*status_))
    return "killed by signal " + std::to_string(WTERMSIG(*status_)) + " (" +
           strsignal(WTERMSIG(*status_)) + ")";
  return "exited " + std::to_string(WEXITSTATUS(*status_));
}

std::optional<int> TargetProcess::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

Result<std::vector<uint8_t>> TargetProcess::read_memory(uint64_t address,
                                                        size_t size) const {
  std::string path = "/proc/" + std::to_string(pid_) + "/mem";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error("open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes(size);
  ssize_t n = pread(fd, bytes.data(), size, static_cast<off_t>(address));
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(size))
    return make_error("read " + path + ": " +
                      (n < 0 ? std::strerror(err) : "short read"));
  return bytes;
}

namespace {

// Entries of a /proc/.../fd directory (while it is open, one is its own
// descriptor when it is this process's).
size_t fd_entries(const std::string &path) {
  DIR *d = opendir(path.c_str());
  if (!d)
    return 0;
  size_t n = 0;
  while (struct dirent *e = readdir(d))
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

} // namespace

size_t TargetProcess::open_descriptors() const {
  return fd_entries("/proc/" + std::to_string(pid_) + "/fd");
}

size_t own_descriptors() {
  return fd_entries("/proc/self/fd") - 1; // opendir's own
}

size_t TargetProcess::mappings() const {
  std::ifstream f("/proc/" + std::to_string(pid_) + "/maps");
  size_t n = 0;
  for (std::string line; std::getline(f, line);)
    n++;
  return n;
}

} // namespace ubtrace::session_test
