// A minimal injector for the fault tests: runtime/inject's inject_agent
// and nothing else, so that a test can start (and kill) thousands of
// injections quickly.
//   inject_tool PID AGENT [--thread TID] [--interrupted] [--entry SYMBOL ARG]
//               [--timeout MS]
// Prints "ok loader=TID borrowed=TID result=N safe=..." or "error: ...";
// exits 0 or 1. UBTRACE_TEST_INJECT_STOP works as in the real CLI.
#include "runtime/inject/injector.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ubtrace::runtime::inject;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PID AGENT [options]\n", argv[0]);
    return 2;
  }
  pid_t pid = static_cast<pid_t>(std::atoi(argv[1]));
  InjectOptions options;
  options.agent_path = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--thread" && i + 1 < argc)
      options.only_thread = static_cast<pid_t>(std::atoi(argv[++i]));
    else if (arg == "--interrupted")
      options.loader = LoaderThread::Interrupted;
    else if (arg == "--entry" && i + 2 < argc) {
      options.entry_symbol = argv[++i];
      options.entry_argument = argv[++i];
    } else if (arg == "--timeout" && i + 1 < argc)
      options.safe_point_timeout =
          std::chrono::milliseconds(std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  auto report = inject_agent(pid, options);
  if (!report) {
    std::printf("error: %s\n", report.error().c_str());
    return 1;
  }
  std::printf("ok loader=%d borrowed=%d result=%d safe=%s\n",
              report->loader_tid, report->borrowed_tid, report->entry_result,
              report->safe_point.c_str());
  return 0;
}
