// bpftrace's `-f json` output: one JSON object per line (NDJSON) on `out`.
#pragma once

#include "backends/output/output.h"

#include <ostream>

namespace ubtrace::output {

class JsonOutput : public Output {
public:
  explicit JsonOutput(std::ostream &out) : out_(out) {}

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
  void benchmark_result(const std::vector<std::string> &names, size_t index,
                        uint64_t average_ns, uint64_t iters) override;
  void test_result(const std::vector<std::string> &names, size_t index,
                   uint64_t duration_ns, const std::vector<bool> &passed,
                   const std::string &output) override;
  void helper_error(std::string_view message, std::string_view helper,
                    int retcode,
                    std::span<const SourceLocation> chain) override;
  void runtime_error(std::string_view message,
                     std::span<const SourceLocation> chain) override;
  void end() override;

private:
  std::ostream &out_;
};

// The line JsonOutput writes for a map, without its newline; empty when
// nothing is written.
std::string map_json(const PrintedMap &map);

} // namespace ubtrace::output
