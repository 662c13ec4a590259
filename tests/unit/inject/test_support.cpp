#include "tests/unit/inject/test_support.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace ubtrace::test {

std::string prog_path(const std::string &name) {
  return std::string(UBT_INJECT_PROGS) + "/" + name;
}
std::string test_agent_path() {
  return prog_path("test_agent.so");
}
std::string other_library_path() {
  return prog_path("preload_other.so");
}

std::string temp_path(const std::string &stem) {
  static std::atomic<int> counter{0};
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/ubt-inject-" +
         std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         stem;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> read_lines(const std::string &path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

bool wait_until(const std::function<bool()> &condition,
                std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::optional<long> blocked_syscall(pid_t pid, pid_t tid) {
  // read(2), not a stream: the kernel can answer ESRCH while the thread
  // changes state, which libstdc++'s filebuf throws on; that is "not
  // known now" here.
  std::string path = "/proc/" + std::to_string(pid) + "/task/" +
                     std::to_string(tid) + "/syscall";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  char buf[128] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0)
    return std::nullopt;
  if (std::string_view(buf).starts_with("running"))
    return -1;
  char *end = nullptr;
  long nr = std::strtol(buf, &end, 10);
  if (end == buf)
    return std::nullopt;
  return nr;
}

std::vector<pid_t> thread_ids(pid_t pid) {
  std::vector<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *entry = ::readdir(d))
      if (int tid = std::atoi(entry->d_name); tid > 0)
        tids.push_back(tid);
    ::closedir(d);
  }
  return tids;
}

std::string signal_state(pid_t pid) {
  std::string out;
  for (pid_t tid : thread_ids(pid)) {
    std::string task =
        "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    out += "thread " + std::to_string(tid) + ":";
    std::istringstream status(read_file(task + "/status"));
    for (std::string line; std::getline(status, line);)
      for (const char *field :
           {"State:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigCgt:", "TracerPid:"})
        if (line.rfind(field, 0) == 0)
          out += " " + line;
    std::string syscall = read_file(task + "/syscall");
    out += " syscall: " + syscall.substr(0, syscall.find(' ')) + "\n";
  }
  return out;
}

TestProcess TestProcess::start(const std::vector<std::string> &argv,
                               const std::vector<std::string> &env,
                               const std::vector<std::pair<int, int>> &fds) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    std::abort();
  std::vector<std::string> env_storage;
  for (char **e = environ; *e; ++e)
    env_storage.emplace_back(*e);
  env_storage.insert(env_storage.end(), env.begin(), env.end());
  std::vector<char *> args, envp;
  std::vector<std::string> arg_storage = argv;
  for (auto &a : arg_storage)
    args.push_back(a.data());
  args.push_back(nullptr);
  for (auto &e : env_storage)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0)
    std::abort();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    for (auto [parent, child] : fds)
      ::dup2(parent, child);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  TestProcess process;
  process.pid_ = pid;
  process.in_ = in[1];
  process.out_ = out[0];
  return process;
}

TestProcess::TestProcess(TestProcess &&other) noexcept
    : pid_(other.pid_), in_(other.in_), out_(other.out_),
      buffer_(std::move(other.buffer_)), eof_(other.eof_),
      reaped_(other.reaped_) {
  other.pid_ = -1;
  other.in_ = other.out_ = -1;
}

TestProcess::~TestProcess() {
  if (in_ >= 0)
    ::close(in_);
  if (out_ >= 0)
    ::close(out_);
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
  }
}

std::optional<std::string>
TestProcess::read_line(std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (eof_)
      return std::nullopt;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    pollfd fd{out_, POLLIN, 0};
    int n = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (n <= 0)
      continue;
    char chunk[4096];
    ssize_t got = ::read(out_, chunk, sizeof chunk);
    if (got <= 0)
      eof_ = true;
    else
      buffer_.append(chunk, static_cast<size_t>(got));
  }
}

std::optional<std::string>
TestProcess::wait_for_line(std::string_view prefix,
                           std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    auto line = read_line(left);
    if (!line)
      return std::nullopt;
    if (line->compare(0, prefix.size(), prefix) == 0)
      return line;
  }
}

std::vector<std::string>
TestProcess::read_remaining(std::chrono::milliseconds timeout) {
  std::vector<std::string> lines;
  while (auto line = read_line(timeout))
    lines.push_back(*line);
  return lines;
}

void TestProcess::write_stdin(std::string_view text) {
  ssize_t n = ::write(in_, text.data(), text.size());
  (void)n;
}

void TestProcess::close_stdin() {
  if (in_ >= 0)
    ::close(in_);
  in_ = -1;
}

void TestProcess::signal(int sig) {
  ::kill(pid_, sig);
}

std::optional<int> TestProcess::wait_exit(std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      reaped_ = true;
      return status;
    }
    if (got < 0) {
      reaped_ = true;
      return std::nullopt;
    }
    if (std::chrono::steady_clock::now() >= end)
      return std::nullopt;
    std::this_thread::sleep_for(1ms);
  }
}

bool TestProcess::wait_stopped(std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
    if (got == pid_) {
      if (WIFSTOPPED(status))
        return true;
      reaped_ = true;
      return false;
    }
    if (got < 0 || std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(200us);
  }
}

} // namespace ubtrace::test
