// A running trace: the maps region, the loaded programs, the backends the
// selector picked for each probe, the event loop and the printing at exit.
#pragma once

#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "backends/output/output.h"
#include "runtime/bundle.h"

namespace ubtrace::backends {

struct SessionOptions {
  std::string output_format = "text"; // text | json
  std::ostream *out = nullptr;        // results (stdout or -o FILE)
  std::ostream *err = nullptr;        // notices and errors
  bool quiet = false;                 // no "Attached N probes"
  int verbose = 0;                    // -v: how each probe was attached
  bool unsafe = false;
  std::string command; // -c
  int pid = 0;         // -p
};

// Set from signal handlers: SIGINT and SIGTERM end the trace gracefully.
extern std::atomic<bool> g_stop_requested;

// Runs the trace described by `bundle` to its end (exit(), a signal, or the
// traced command exiting). Returns the process exit code.
int run_session(const runtime::Bundle &bundle, const SessionOptions &opts);

} // namespace ubtrace::backends
