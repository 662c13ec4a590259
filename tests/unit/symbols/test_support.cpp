#include "tests/unit/symbols/test_support.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::symbols_test {

std::string prog(const std::string &name) {
  return std::string(UBT_SYMBOLS_PROGS) + "/" + name;
}

bool file_exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

CommandOutput run_command(const std::vector<std::string> &argv) {
  CommandOutput result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return result;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    std::vector<char *> args;
    for (const auto &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0)
    result.out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

Child::Child(const std::string &path) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    return;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::execl(path.c_str(), path.c_str(), static_cast<char *>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    finish();
  }
}

std::optional<std::string> Child::read_line() {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    char buf[4096];
    ssize_t n = ::read(out_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::vector<std::string> Child::read_until_ready() {
  std::vector<std::string> lines;
  while (auto line = read_line()) {
    if (*line == "ready")
      break;
    lines.push_back(*line);
  }
  return lines;
}

void Child::write(const std::string &text) {
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(in_fd_, p, left);
    if (n <= 0)
      return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

int Child::finish() {
  if (in_fd_ >= 0)
    ::close(in_fd_);
  in_fd_ = -1;
  int status = -1;
  if (pid_ > 0)
    ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (out_fd_ >= 0)
    ::close(out_fd_);
  out_fd_ = -1;
  return status;
}

std::map<std::string, uint64_t>
parse_addresses(const std::vector<std::string> &lines) {
  std::map<std::string, uint64_t> out;
  for (const auto &line : lines) {
    std::istringstream in(line);
    std::string name, addr;
    if (in >> name >> addr && addr.starts_with("0x"))
      out[name] = std::strtoull(addr.c_str(), nullptr, 16);
  }
  return out;
}

bool read_process_memory(pid_t pid, uint64_t addr, void *out, size_t size) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(),
                  O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = ::pread(fd, out, size, static_cast<off_t>(addr));
  ::close(fd);
  return n == static_cast<ssize_t>(size);
}

bool write_process_memory(pid_t pid, uint64_t addr, const void *in,
                          size_t size) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(),
                  O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = ::pwrite(fd, in, size, static_cast<off_t>(addr));
  ::close(fd);
  return n == static_cast<ssize_t>(size);
}

std::optional<std::string> bpftrace_unavailable() {
  if (::geteuid() != 0)
    return "bpftrace lists probes only as root";
  auto version = run_command({"bpftrace", "--version"});
  if (version.status != 0)
    return "bpftrace is not installed";
  return std::nullopt;
}

} // namespace ubtrace::symbols_test
