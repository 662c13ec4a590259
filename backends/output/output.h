// Output: where everything a running script prints goes, in one of
// bpftrace's two formats (text_output.h, json_output.h). The CLI formats
// values and maps (decode.h, printed_map.h, printf_format.h) and hands the
// results here.
#pragma once

#include "backends/output/printed_map.h"
#include "backends/output/value.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::output {

// Where a message comes from: errorf()/warnf() calls and runtime errors,
// and for macros each place it was expanded from.
struct SourceLocation {
  std::string filename; // "stdin" for -e programs
  uint64_t line = 0;
  uint64_t column = 0;
  std::string text;                 // as diagnostics show it: "stdin:1:9-62"
  std::vector<std::string> context; // the source line and its ~~~ underline
};

enum class Severity : uint8_t { Warning, Error };

// Probe runs the traced process lost, by reason (a nested hit skipped, a
// return not traced, ...): one line each at exit, after "Lost N events".
struct LostHits {
  uint64_t count = 0;
  std::string reason;  // a stable key for JSON ("nested", ...)
  std::string message; // the whole sentence text output prints
};

// How the traced process ended, when the trace says so (process_end.h).
struct ProcessExit {
  int64_t pid = 0;
  std::string comm;
  std::string message;          // the sentence text output prints
  std::optional<int> exit_code; // exited
  std::optional<int> signal;    // killed by a signal
  bool core_dumped = false;
};

class Output {
public:
  virtual ~Output() = default;

  // A map: print(@m) or at exit. Maps with no entries print nothing (JSON
  // prints an empty object for avg/stats maps, as bpftrace does).
  virtual void map(const PrintedMap &map) = 0;
  // print() of a value that is not a map.
  virtual void value(const Value &value) = 0;
  // printf() output, already formatted.
  virtual void printf(std::string_view text) = 0;
  // errorf()/warnf(): `chain` holds the call first, then the places it was
  // expanded from.
  virtual void diagnostic(Severity severity, std::string_view message,
                          std::span<const SourceLocation> chain) = 0;
  virtual void time(std::string_view text) = 0;
  virtual void cat(std::string_view text) = 0;
  virtual void join(std::string_view text) = 0;
  virtual void syscall(std::string_view text) = 0;
  virtual void lost_events(uint64_t lost) = 0;
  virtual void lost_hits(const LostHits &lost) = 0;
  virtual void process_exit(const ProcessExit &exit) = 0;
  virtual void attached_probes(uint64_t probes) = 0;
  // --bench: the result of bench probe `names[index]` (names: every bench
  // probe, in order): nanoseconds per run, averaged over `iters` runs.
  virtual void benchmark_result(const std::vector<std::string> &names,
                                size_t index, uint64_t average_ns,
                                uint64_t iters) = 0;
  // --test: the result of test probe `names[index]` (names: every test
  // probe, in order; passed: each result so far), how long its run took,
  // and what it printed (shown by text output only when it failed).
  virtual void test_result(const std::vector<std::string> &names, size_t index,
                           uint64_t duration_ns,
                           const std::vector<bool> &passed,
                           const std::string &output) = 0;
  // A helper call failed at run time. `message` is what text output says
  // (e.g. "Map full; can't update element..."), `helper` the helper's name;
  // JSON reports strerror(-retcode) instead, as bpftrace does.
  virtual void helper_error(std::string_view message, std::string_view helper,
                            int retcode,
                            std::span<const SourceLocation> chain) = 0;
  // Any other runtime error.
  virtual void runtime_error(std::string_view message,
                             std::span<const SourceLocation> chain) = 0;
  // The script is done; the maps printed at exit follow.
  virtual void end() = 0;
};

// Exit-time printing: end(), then each map in name order (bytewise, so
// "@" comes before "@a"). Which maps to pass is the caller's choice.
void print_maps_at_exit(Output &out, std::vector<PrintedMap> maps);

} // namespace ubtrace::output
