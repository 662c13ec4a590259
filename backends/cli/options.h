// Command-line options of the ubtrace CLI (bpftrace-compatible spellings).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ubtrace::cli {

struct Options {
  std::string program;      // script text
  std::string program_name; // "stdin" for -e, else the file name
  std::vector<std::string> positional;
  std::vector<std::string> named_args; // --NAME[=VALUE] after `--`
  std::string output_format = "text";  // -f text|json|folded
  std::string output_file;             // -o
  std::string command;                 // -c
  bool follow = false; // --follow: the command's tree through exec
  // -p PID[,PID...], repeatable: each process once, in the order given.
  std::vector<int> pids;
  int first_pid() const { return pids.empty() ? 0 : pids.front(); }
  bool list = false; // -l
  std::string list_pattern;
  bool dry_run = false;
  std::vector<std::string> debug_stages; // -d ast,types,ir,bpf
  std::string emit_elf;                  // --emit-elf FILE
  bool quiet = false;                    // -q
  bool unsafe = false;                   // --unsafe
  bool bench = false;                    // --bench, --mode bench
  bool test = false;                     // --test, --mode test
  bool no_warnings = false;
  bool helper_errors = false; // -k, --warnings
  int verbose = 0;
  bool help = false;
  bool version = false;
  bool info = false;
  std::string buffering; // -B line|full|none; empty: the stream's default
  std::vector<std::string> include_dirs;
  std::vector<std::string> include_files;
  std::vector<std::string> debuginfo_dirs; // --debuginfo DIR
  std::string metrics_listen;              // --metrics HOST:PORT
  std::string probe_filter;                // --probe-filter REGEX
};

// Parses argv. On an error returns nullopt and sets `error`; `usage` says
// whether the usage text belongs after it (not for a bad value whose message
// says all, such as a pid).
std::optional<Options> parse_options(int argc, char **argv, std::string &error,
                                     bool &usage);

std::string usage_text();

} // namespace ubtrace::cli
