#include "backends/output/text_output.h"

#include "backends/output/text_value.h"

namespace ubtrace::output {
namespace {

// One diagnostic line as bpftrace logs it: "LOCATION: ERROR: message", the
// message losing one trailing newline, then the source context lines.
void log_line(std::ostream &err, const SourceLocation *loc,
              std::string_view type, std::string_view message,
              bool with_context) {
  if (!message.empty() && message.back() == '\n')
    message.remove_suffix(1);
  if (loc)
    err << loc->text << ": ";
  err << type << message << '\n';
  if (loc && with_context)
    for (const auto &line : loc->context)
      err << line << '\n';
}

void log_expansions(std::ostream &err, std::string_view type,
                    std::span<const SourceLocation> chain) {
  for (size_t i = 1; i < chain.size(); ++i)
    log_line(err, &chain[i], type, "expanded from", true);
}

} // namespace

// Stacks in map keys are indented by 4, not 8 (bpftrace's layout).
static void indent_key_stacks(Value &v) {
  if (v.stack) {
    const std::string from = "\n        ", to = "\n    ";
    for (size_t pos = 0; (pos = v.text.find(from, pos)) != std::string::npos;
         pos += to.size())
      v.text.replace(pos, from.size(), to);
  }
  for (auto &e : v.elements)
    indent_key_stacks(e);
}

std::string key_text(const Value &key) {
  Value k = key;
  indent_key_stacks(k);
  std::string s = text_of(k);
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')')
    s = s.substr(1, s.size() - 2);
  return s;
}

std::string map_text(const PrintedMap &map) {
  std::string out;
  for (const auto &e : map.entries) {
    out += map.name;
    if (!map.scalar)
      out += "[" + key_text(e.key) + "]";
    if (e.hist) {
      out += ":\n" + hist_text(*e.hist) + "\n";
    } else if (e.series) {
      out += ":\n" + tseries_text(*e.series) + "\n";
    } else {
      out += ": " + text_of(e.value) + "\n";
    }
  }
  return out;
}

void TextOutput::map(const PrintedMap &map) {
  out_ << map_text(map);
  out_.flush();
}

void TextOutput::value(const Value &value) {
  out_ << text_of(value) << '\n';
}

void TextOutput::printf(std::string_view text) {
  out_ << text;
}

void TextOutput::diagnostic(Severity severity, std::string_view message,
                            std::span<const SourceLocation> chain) {
  std::string_view type = severity == Severity::Error ? "ERROR: " : "WARNING: ";
  // The call's own context is just the errorf()/warnf() call: not shown.
  log_line(err_, chain.empty() ? nullptr : &chain[0], type, message, false);
  log_expansions(err_, type, chain);
}

void TextOutput::time(std::string_view text) {
  out_ << text;
}

void TextOutput::cat(std::string_view text) {
  out_ << text;
}

void TextOutput::join(std::string_view text) {
  out_ << text << '\n';
}

// The command's output as it wrote it: its own last newline ends the line
// (bpftrace adds none).
void TextOutput::syscall(std::string_view text) {
  out_ << text;
}

void TextOutput::lost_events(uint64_t lost) {
  err_ << "Lost " << lost << " events\n";
}

void TextOutput::lost_hits(const LostHits &lost) {
  err_ << lost.message << '\n';
}

void TextOutput::process_exit(const ProcessExit &exit) {
  err_ << exit.message << '\n';
}

void TextOutput::benchmark_result(const std::vector<std::string> &names,
                                  size_t index, uint64_t average_ns,
                                  uint64_t iters) {
  // bpftrace's table: the name column as wide as the longest name (40 at
  // least) plus one, the time column 15.
  size_t width = 40;
  for (const auto &n : names)
    width = std::max(width, n.size());
  auto pad = [](std::string s, size_t w) {
    if (s.size() < w)
      s.resize(w, ' ');
    return s;
  };
  if (index == 0) {
    out_ << pad("Benchmark", width + 1) << pad("Time(ns)", 15)
         << "Iterations\n";
    out_ << std::string(width + 1 + 15 + 10, '-') << "\n";
  }
  out_ << pad(names[index], width + 1) << pad(std::to_string(average_ns), 15)
       << iters << "\n";
}

void TextOutput::test_result(const std::vector<std::string> &names,
                             size_t index, uint64_t duration_ns,
                             const std::vector<bool> &passed,
                             const std::string &output) {
  // bpftrace's GoogleTest-like report, without its colour escapes.
  auto tests = [](size_t n) {
    return std::to_string(n) + (n == 1 ? " test" : " tests");
  };
  if (index == 0)
    out_ << "[==========] Running " << tests(names.size()) << ".\n";
  out_ << "[ RUN      ] " << names[index] << "\n";
  if (passed[index]) {
    out_ << "[       OK ] " << names[index];
  } else {
    // What the failed test printed, between its RUN and FAILED lines.
    for (size_t at = 0; at < output.size();) {
      size_t nl = output.find('\n', at);
      if (nl == std::string::npos)
        nl = output.size();
      if (nl > at)
        out_ << std::string_view(output).substr(at, nl - at) << "\n";
      at = nl + 1;
    }
    out_ << "[  FAILED  ] " << names[index];
  }
  const char *unit = "ns";
  uint64_t scale = 1;
  if (duration_ns >= 1000000000ull)
    unit = "s", scale = 1000000000ull;
  else if (duration_ns >= 1000000ull)
    unit = "ms", scale = 1000000ull;
  else if (duration_ns >= 1000ull)
    unit = "\u03bcs", scale = 1000ull;
  out_ << " (" << duration_ns / scale << " " << unit << ")\n";
  if (index + 1 != names.size())
    return;
  size_t failed = std::count(passed.begin(), passed.end(), false);
  out_ << "[==========] " << tests(names.size()) << " ran.\n";
  out_ << "[  PASSED  ] " << tests(names.size() - failed) << ".\n";
  if (failed) {
    out_ << "[  FAILED  ] " << tests(failed) << ", listed below:\n";
    for (size_t i = 0; i < names.size(); i++)
      if (!passed[i])
        out_ << "[  FAILED  ] " << names[i] << "\n";
  }
}

void TextOutput::attached_probes(uint64_t probes) {
  err_ << "Attached " << probes << (probes == 1 ? " probe\n" : " probes\n");
}

void TextOutput::helper_error(std::string_view message, std::string_view helper,
                              int retcode,
                              std::span<const SourceLocation> chain) {
  std::string text(message);
  text += "\nAdditional Info - helper: ";
  text += helper;
  text += ", retcode: " + std::to_string(retcode);
  log_line(err_, chain.empty() ? nullptr : &chain[0], "WARNING: ", text, true);
  log_expansions(err_, "WARNING: ", chain);
}

void TextOutput::runtime_error(std::string_view message,
                               std::span<const SourceLocation> chain) {
  log_line(err_, chain.empty() ? nullptr : &chain[0], "WARNING: ", message,
           true);
  log_expansions(err_, "WARNING: ", chain);
}

void TextOutput::end() {
  out_ << "\n\n";
  out_.flush();
}

} // namespace ubtrace::output
