// A running trace: the maps region, the loaded programs, the backends the
// selector picked for the probes (backend.h: it drives them through their
// life), the event loop and the printing.
//
// The end of the traced process ends the trace (-c: the command exits; -p:
// the process exits, dies or stays an unreaped zombie; -p also when its
// agent hangs up; with several -p processes, the last of them to be done,
// each end said as it comes). How it ended is said, never passed on:
// run_session() returns the trace's own status (0, exit(n)'s n, 1 on errors),
// as bpftrace does, and a target killed by a signal (-c, -p) or any end of a -p
// target is reported through Output::process_exit (stderr, or a "process_exit"
// JSON record). man/ubtrace.8, THE TRACED PROCESS ENDS.
#pragma once

#include "backends/output/output.h"
#include "runtime/bundle.h"

#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace ubtrace::backends {

struct SessionOptions {
  std::string output_format = "text"; // a name in output/formats.h
  // -o FILE of a format that keeps one document in it (prometheus,
  // pprof: rewritten atomically); `out` then takes what is not a map.
  std::string whole_file;
  // --metrics HOST:PORT: serve the maps to Prometheus while tracing.
  std::string metrics_listen;
  std::ostream *out = nullptr; // results (stdout or -o FILE)
  std::ostream *err = nullptr; // notices and errors
  bool quiet = false;          // no "Attached N probes"
  int verbose = 0;             // -v: how each probe was attached
  bool unsafe = false;
  bool bench = false;       // --bench: the CLI runs bench: probes, timed
  bool test = false;        // --test: the CLI runs test: probes, judged
  bool no_warnings = false; // --no-warnings: warnf() prints nothing
  std::string command;      // -c
  std::vector<int> pids;    // -p, each process once
  bool follow = false;      // --follow: the command's tree through exec
};

// Set from signal handlers: SIGINT and SIGTERM end the trace gracefully.
extern std::atomic<bool> g_stop_requested;
// Counted by the CLI's SIGUSR1 handler: self:signal:SIGUSR1 probes run
// once for the signals that arrived since they last ran.
extern std::atomic<uint64_t> g_sigusr1_count;

// Runs the trace described by `bundle` to its end (exit(), a signal, or the
// traced command exiting). Returns the process exit code.
int run_session(const runtime::Bundle &bundle, const SessionOptions &opts);

} // namespace ubtrace::backends
