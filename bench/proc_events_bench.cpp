// How soon a system-wide trace learns of an exec: the delay from the
// kernel's exec event (its CLOCK_MONOTONIC stamp) to this reader having
// it in hand, through the process events connector (runtime/inject/
// proc_events.h). Two loads: execs one after another (a shell), and
// bursts of 50 children started at once (a build). Needs root.
//
//   build/bench/proc_events_bench [N]      (default 500 execs per load)
#include "runtime/inject/proc_events.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <poll.h>
#include <set>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

using ubtrace::runtime::inject::ProcEvent;
using ubtrace::runtime::inject::ProcEvents;

static uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

static pid_t start_true() {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/true", "true", static_cast<char *>(nullptr));
    _exit(127);
  }
  return pid;
}

// A process of its own starts the execs (the reader must not be the one
// busy forking): `n` of them, `burst` at once, waiting for each burst.
static pid_t start_forker(size_t n, size_t burst) {
  pid_t forker = fork();
  if (forker != 0)
    return forker;
  usleep(100000); // the reader is listening by then
  for (size_t done = 0; done < n; done += burst) {
    std::vector<pid_t> kids;
    for (size_t i = 0; i < burst; ++i)
      kids.push_back(start_true());
    for (pid_t pid : kids)
      waitpid(pid, nullptr, 0);
  }
  _exit(0);
}

// The delays of the execs of the forker's children, until it exits.
static void collect(ProcEvents &events, pid_t forker,
                    std::vector<uint64_t> &out) {
  std::set<pid_t> kids;
  uint64_t deadline = now_ns() + 60000000000ull;
  bool over = false;
  while (!over && now_ns() < deadline) {
    pollfd p{events.fd(), POLLIN, 0};
    (void)poll(&p, 1, 100);
    for (const ProcEvent &e : events.read_now(4096)) {
      uint64_t at = now_ns();
      if (e.kind == ProcEvent::Kind::Fork && e.parent_tgid == forker)
        kids.insert(e.tgid);
      else if (e.kind == ProcEvent::Kind::Exec && kids.erase(e.tgid))
        out.push_back(at - e.monotonic_ns);
      else if (e.kind == ProcEvent::Kind::Exit && e.tgid == forker &&
               e.pid == forker)
        over = true;
    }
  }
  waitpid(forker, nullptr, 0);
}

static void report(const char *load, std::vector<uint64_t> &d, size_t want) {
  std::sort(d.begin(), d.end());
  auto at = [&](double q) {
    return d.empty() ? 0.0
                     : d[std::min(d.size() - 1, size_t(q * d.size()))] / 1e3;
  };
  std::printf("%-22s told %zu/%zu  median %.1f us  p99 %.1f us  max %.1f us\n",
              load, d.size(), want, at(0.5), at(0.99),
              d.empty() ? 0.0 : d.back() / 1e3);
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 500;
  auto events = ProcEvents::open();
  if (!events) {
    std::fprintf(stderr, "%s\n", events.error().c_str());
    return 1;
  }
  std::vector<uint64_t> one_by_one, bursts;
  collect(*events, start_forker(n, 1), one_by_one);
  collect(*events, start_forker(n, 50), bursts);
  report("one exec at a time", one_by_one, n);
  report("bursts of 50", bursts, (n + 49) / 50 * 50);
  std::printf("overruns %llu\n", (unsigned long long)events->overruns());
  return 0;
}
