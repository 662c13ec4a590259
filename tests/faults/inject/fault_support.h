// Helpers for the injection fault tests: the fault programs' paths, the
// steady target (progs/steady_target.c) and its threads, running the
// injector (inject_tool or the CLI) as a child that a test kills, and
// waiting until the target has settled after an injection.
#pragma once

#include "tests/unit/inject/test_support.h"

#include <csignal>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::test {

// A program of build/tests/faults/progs.
std::string fault_prog(const std::string &name);

// The steady target, started and ready: its roles' thread ids.
struct SteadyTarget {
  TestProcess process;
  std::map<std::string, pid_t> threads; // main, sleeper, waiter, timed, crunch
  // Stops it ("q") and returns its last line ("ok" or "error ...") and
  // whether it exited 0.
  std::pair<std::string, bool> finish();
};
std::optional<SteadyTarget> start_steady_target();

// An injector run as a child (argv[0] is a path): the process, and the
// steps it reports (UBTRACE_TEST_INJECT_TRACE_FD) when `steps` is set.
class Injector {
public:
  static Injector start(const std::vector<std::string> &argv,
                        const std::vector<std::string> &env, bool steps);
  pid_t pid() const { return process_.pid(); }
  // Waits for it to end; the raw wait status (nullopt on timeout).
  std::optional<int> wait(std::chrono::milliseconds timeout = 30s) {
    return process_.wait_exit(timeout);
  }
  // Waits until it is stopped (the :pause hook); false if it ended first.
  bool wait_stopped(std::chrono::milliseconds timeout = 30s) {
    return process_.wait_stopped(timeout);
  }
  void kill() { process_.signal(SIGKILL); }
  // The last step it reported (0: none); reads what is left in the pipe.
  int last_step();
  // Waits until it reported step `step` (or one after it); false if it
  // ended or timed out first.
  bool wait_step(int step, std::chrono::milliseconds timeout = 30s);
  std::string output(); // its stdout, once it has ended

  ~Injector();
  Injector(Injector &&other) noexcept;
  Injector &operator=(Injector &&) = delete;

private:
  Injector(TestProcess process, int steps_fd)
      : process_(std::move(process)), steps_fd_(steps_fd) {}
  TestProcess process_;
  int steps_fd_ = -1;
  int last_step_ = 0;
};

// Waits until the target has only its own `threads` threads again (the
// loader threads of injections are gone) and no injection region is
// mapped. False (with what is left in `why`) at the timeout.
bool wait_settled(pid_t pid, size_t threads, std::string &why,
                  std::chrono::milliseconds timeout = 40s);

// Injection regions mapped in the process now.
int injection_regions(pid_t pid);

// Whether the process is alive and not a zombie.
bool alive(pid_t pid);

} // namespace ubtrace::test
