// bpftrace's text output: results on `out`, notices and errors on `err`.
#pragma once

#include "backends/output/output.h"

#include <ostream>

namespace ubtrace::output {

class TextOutput : public Output {
public:
  TextOutput(std::ostream &out, std::ostream &err) : out_(out), err_(err) {}

  void map(const PrintedMap &map) override;
  void value(const Value &value) override;
  void printf(std::string_view text) override;
  void diagnostic(Severity severity, std::string_view message,
                  std::span<const SourceLocation> chain) override;
  void time(std::string_view text) override;
  void cat(std::string_view text) override;
  void join(std::string_view text) override;
  void syscall(std::string_view text) override;
  void lost_events(uint64_t lost) override;
  void lost_hits(const LostHits &lost) override;
  void process_exit(const ProcessExit &exit) override;
  void attached_probes(uint64_t probes) override;
  void helper_error(std::string_view message, std::string_view helper,
                    int retcode,
                    std::span<const SourceLocation> chain) override;
  void runtime_error(std::string_view message,
                     std::span<const SourceLocation> chain) override;
  void end() override;

private:
  std::ostream &out_;
  std::ostream &err_;
};

// The text of a map as TextOutput prints it (exposed for tests and for
// callers that collect output).
std::string map_text(const PrintedMap &map);

// A key as it appears between "@m[" and "]": a tuple loses its outer
// parentheses ("1, abc").
std::string key_text(const Value &key);

} // namespace ubtrace::output
