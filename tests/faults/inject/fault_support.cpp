#include "tests/faults/inject/fault_support.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ubtrace::test {

std::string fault_prog(const std::string &name) {
  // UBT_FAULT_PROGS overrides (to run these tests against other builds of
  // the programs, e.g. an older injector).
  const char *dir = std::getenv("UBT_FAULT_PROGS");
  return std::string(dir && *dir ? dir : UBT_FAULT_PROGS_DIR) + "/" + name;
}

std::optional<SteadyTarget> start_steady_target() {
  SteadyTarget target{TestProcess::start({fault_prog("steady_target")}), {}};
  auto ready = target.process.wait_for_line("ready ");
  if (!ready)
    return std::nullopt;
  std::istringstream in(ready->substr(6));
  for (std::string word; in >> word;) {
    size_t eq = word.find('=');
    if (eq != std::string::npos)
      target.threads[word.substr(0, eq)] =
          static_cast<pid_t>(std::atoi(word.c_str() + eq + 1));
  }
  if (target.threads.size() != 5)
    return std::nullopt;
  return target;
}

std::pair<std::string, bool> SteadyTarget::finish() {
  process.write_stdin("q\n");
  std::string last;
  for (const std::string &line : process.read_remaining(30s))
    last = line;
  auto status = process.wait_exit(30s);
  return {last, status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0};
}

Injector Injector::start(const std::vector<std::string> &argv,
                         const std::vector<std::string> &env, bool steps) {
  constexpr int kStepsFd = 100;
  int trace[2] = {-1, -1};
  std::vector<std::string> environment = env;
  std::vector<std::pair<int, int>> fds;
  if (steps) {
    if (::pipe2(trace, O_CLOEXEC) != 0)
      std::abort();
    environment.push_back("UBTRACE_TEST_INJECT_TRACE_FD=" +
                          std::to_string(kStepsFd));
    fds.emplace_back(trace[1], kStepsFd);
  }
  TestProcess process = TestProcess::start(argv, environment, fds);
  if (trace[1] >= 0)
    ::close(trace[1]);
  return Injector(std::move(process), trace[0]);
}

int Injector::last_step() {
  if (steps_fd_ < 0)
    return last_step_;
  char bytes[64];
  for (;;) {
    pollfd fd{steps_fd_, POLLIN, 0};
    if (::poll(&fd, 1, 0) <= 0)
      break;
    ssize_t n = ::read(steps_fd_, bytes, sizeof bytes);
    if (n <= 0)
      break;
    last_step_ = bytes[n - 1];
  }
  return last_step_;
}

bool Injector::wait_step(int step, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (last_step() < step) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0 || steps_fd_ < 0)
      return false;
    pollfd fd{steps_fd_, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0 ||
        (fd.revents & POLLIN) == 0)
      return false;
  }
  return true;
}

std::string Injector::output() {
  std::string text;
  for (const std::string &line : process_.read_remaining(1s))
    text += line + "\n";
  return text;
}

Injector::~Injector() {
  if (steps_fd_ >= 0)
    ::close(steps_fd_);
}

Injector::Injector(Injector &&other) noexcept
    : process_(std::move(other.process_)), steps_fd_(other.steps_fd_),
      last_step_(other.last_step_) {
  other.steps_fd_ = -1;
}

bool alive(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

int injection_regions(pid_t pid) {
  // Named [anon:ubtrace-inject] where the kernel names anonymous memory;
  // else known by its shape (runtime/inject/bootstrap_layout.h): the
  // block's pages, a guard page, the call stack.
  std::string maps = read_file("/proc/" + std::to_string(pid) + "/maps");
  int named = 0;
  for (size_t at = maps.find("ubtrace-inject"); at != std::string::npos;
       at = maps.find("ubtrace-inject", at + 1))
    ++named;
  if (named)
    return named;
  struct Map {
    unsigned long long start, end;
    std::string perms, rest;
  };
  std::vector<Map> list;
  std::istringstream in(maps);
  for (std::string line; std::getline(in, line);) {
    Map map{};
    char perms[8] = {};
    char rest[512] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %*s %*s %*s %511[^\n]",
                    &map.start, &map.end, perms, rest) >= 3) {
      map.perms = perms;
      map.rest = rest;
      list.push_back(map);
    }
  }
  int shaped = 0;
  for (size_t i = 0; i + 2 < list.size(); ++i) {
    const Map &a = list[i], &b = list[i + 1], &c = list[i + 2];
    if (a.perms == "rw-p" && a.end - a.start == 0x2000 && a.rest.empty() &&
        b.start == a.end && b.perms == "---p" && b.end - b.start == 0x1000 &&
        c.start == b.end && c.perms == "rw-p" && c.end - c.start == 0x40000 &&
        c.rest.empty())
      ++shaped;
  }
  return shaped;
}

bool wait_settled(pid_t pid, size_t threads, std::string &why,
                  std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        size_t now = thread_ids(pid).size();
        int regions = injection_regions(pid);
        why = std::to_string(now) + " threads, " + std::to_string(regions) +
              " injection regions mapped";
        return now == threads && regions == 0;
      },
      timeout);
}

} // namespace ubtrace::test
