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
  std::ostream &err_;
};

// The text of a map as TextOutput prints it (exposed for tests and for
// callers that collect output).
std::string map_text(const PrintedMap &map);

// An output that prints maps its own way and everything else as text
// output does (folded stacks, Prometheus metrics): subclasses give map()
// and end().
class MapsOwnOutput : public Output {
public:
  MapsOwnOutput(std::ostream &out, std::ostream &err) : text_(out, err) {}

  void value(const Value &value) override { text_.value(value); }
  void printf(std::string_view text) override { text_.printf(text); }
  void diagnostic(Severity severity, std::string_view message,
                  std::span<const SourceLocation> chain) override {
    text_.diagnostic(severity, message, chain);
  }
  void time(std::string_view text) override { text_.time(text); }
  void cat(std::string_view text) override { text_.cat(text); }
  void join(std::string_view text) override { text_.join(text); }
  void syscall(std::string_view text) override { text_.syscall(text); }
  void lost_events(uint64_t lost) override { text_.lost_events(lost); }
  void lost_hits(const LostHits &lost) override { text_.lost_hits(lost); }
  void process_exit(const ProcessExit &exit) override {
    text_.process_exit(exit);
  }
  void benchmark_result(const std::vector<std::string> &names, size_t index,
                        uint64_t average_ns, uint64_t iters) override {
    text_.benchmark_result(names, index, average_ns, iters);
  }
  void test_result(const std::vector<std::string> &names, size_t index,
                   uint64_t duration_ns, const std::vector<bool> &passed,
                   const std::string &output) override {
    text_.test_result(names, index, duration_ns, passed, output);
  }
  void attached_probes(uint64_t probes) override {
    text_.attached_probes(probes);
  }
  void helper_error(std::string_view message, std::string_view helper,
                    int retcode,
                    std::span<const SourceLocation> chain) override {
    text_.helper_error(message, helper, retcode, chain);
  }
  void runtime_error(std::string_view message,
                     std::span<const SourceLocation> chain) override {
    text_.runtime_error(message, chain);
  }

protected:
  TextOutput text_;
};

// A key as it appears between "@m[" and "]": a tuple loses its outer
// parentheses ("1, abc").
std::string key_text(const Value &key);

} // namespace ubtrace::output
