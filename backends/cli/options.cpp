#include "backends/cli/options.h"

#include "backends/output/formats.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

namespace ubtrace::cli {

namespace {

// "OUTPUT FORMATS:" and each format's help, wrapped as the options are.
std::string formats_text() {
  std::string out = "\nOUTPUT FORMATS (-f):\n";
  for (const auto &f : output::output_formats()) {
    std::string line = "    " + std::string(f.name);
    line.resize(24, ' ');
    size_t width = line.size();
    std::istringstream words{std::string(f.help)};
    std::string word;
    while (words >> word) {
      if (width + word.size() + 1 > 76 && width > 24) {
        out += line + "\n";
        line = std::string(24, ' ');
        width = 24;
      } else if (width > 24) {
        line += ' ';
        width++;
      }
      line += word;
      width += word.size();
    }
    out += line + "\n";
  }
  return out;
}

} // namespace

std::string usage_text() {
  return R"(USAGE:
    ubtrace [options] FILE [ARGS...]
    ubtrace [options] - [ARGS...]        (program from standard input)
    ubtrace [options] -e 'PROGRAM' [ARGS...]

OPTIONS:
    -e PROGRAM          run this program
    -c, --cmd CMD       run CMD with ubtrace's agent and trace it
    --follow            with -c: trace every program CMD's process tree
                        execs too, not CMD's process and its forks alone
    -p, --pid PID[,PID...]
                        trace the running process PID; several, as a
                        list or by repeating -p, are traced together
    -l [PATTERN|FILE]   list probes matching PATTERN (uprobe, usdt,
                        interval), or those of a program (-e or FILE);
                        with -p PID and no pattern, all of that process
    -f FORMAT           output format (OUTPUT FORMATS below)
    -o, --output FILE   write the output to FILE
    -q                  quiet: no "Attached N probes" message
    -B MODE             output buffering: line, full or none
    -d STAGE            dump a stage: ast, types, ir, bpf, all (comma list)
    -v                  verbose messages
    -I DIR              accepted for bpftrace compatibility (no preprocessor)
    --include FILE      accepted for bpftrace compatibility (no preprocessor)
    --metrics HOST:PORT serve the maps as Prometheus metrics at
                        http://HOST:PORT/metrics while tracing (:PORT for
                        every address)
    --debuginfo DIR     look for separate debug files in DIR first (by
                        .gnu_debuglink name, .build-id/ and NAME.debug);
                        may be repeated
    --probe-filter RE   attach only the probes whose names RE (an extended
                        regular expression) finds; begin and end stay
    --dry-run           check and compile the program, run nothing
    --emit-elf FILE     write the BPF object to FILE
    --unsafe            allow system(), signal() and other unsafe functions
    --bench             run the bench: probes and print their times (also
                        --mode bench; --mode run is the default)
    --test              run the test: probes and report which pass (also
                        --mode test)
    --no-warnings       do not print warnings
    -k, --warnings      warn where a read of the process or a map element fails
    --info              print the build, the backends available here and
                        the config variables with their defaults
    -h, --help          show this help
    -V, --version       print the version

Positional parameters ($1, $2, ...) follow the program; $# is their count.

ENVIRONMENT:
    UBTRACE_<NAME> (or BPFTRACE_<NAME>) sets config variable <name>, e.g.
    UBTRACE_MAX_STRLEN=128; it overrides the script's config block.
    --info lists the variables, man ubtrace(8) describes them.
)" + formats_text();
}

// Reads a script. A directory opens like a file but reads nothing: it is
// refused by name (EISDIR) rather than run as an empty program; any other
// read error is one too (pipes and /dev/fd paths read as files do).
static bool read_file(const std::string &path, std::string &out) {
  struct stat st{};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    errno = EIO;
    return false;
  }
  out = ss.str();
  return true;
}

// A process id, with bpftrace's texts for what is not one: a decimal number
// (no sign, no trailing bytes) up to the kernel's pid_max. Returns an empty
// string or the error.
static std::string parse_pid(const char *text, int &pid) {
  if (!std::isdigit(static_cast<unsigned char>(*text)))
    return std::string("Failed to parse pid: invalid integer: ") + text;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (*end)
    return std::string("Failed to parse pid: invalid trailing bytes: ") + text;
  unsigned long long max = 4194304; // PID_MAX_LIMIT on 64-bit kernels
  if (std::ifstream in("/proc/sys/kernel/pid_max"); in) {
    unsigned long long m = 0;
    if (in >> m && m > 0)
      max = m;
  }
  if (errno || v == 0 || v > max ||
      v > static_cast<unsigned long long>(INT_MAX))
    return std::string("Pid out of range: ") + text;
  pid = static_cast<int>(v);
  return {};
}

std::optional<Options> parse_options(int argc, char **argv, std::string &error,
                                     bool &usage) {
  usage = true;
  Options o;
  bool have_program = false;
  bool after_dashdash = false;
  std::vector<std::string> rest;

  auto need = [&](int &i, const char *flag) -> const char * {
    if (i + 1 >= argc) {
      error = std::string("option ") + flag + " requires an argument";
      return nullptr;
    }
    return argv[++i];
  };

  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    // After `--`: --NAME[=VALUE] is a named parameter (getopt()).
    if (after_dashdash && a.size() > 2 && a.compare(0, 2, "--") == 0) {
      o.named_args.push_back(a.substr(2));
      continue;
    }
    if (after_dashdash || a == "-" || a.empty() || a[0] != '-') {
      rest.push_back(a);
      continue;
    }
    if (a == "--") {
      after_dashdash = true;
      continue;
    }
    if (a == "-e") {
      const char *v = need(i, "-e");
      if (!v)
        return std::nullopt;
      o.program = v;
      o.program_name = "stdin";
      have_program = true;
    } else if (a == "-c" || a == "--cmd") {
      const char *v = need(i, a.c_str());
      if (!v)
        return std::nullopt;
      if (!*v) {
        error = "-c needs a command to run";
        return std::nullopt;
      }
      o.command = v;
    } else if (a == "-p" || a == "--pid") {
      const char *v = need(i, a.c_str());
      if (!v)
        return std::nullopt;
      // A comma-separated list; each pid is checked as bpftrace checks
      // its one, and one given twice is traced once.
      // (getline yields no last empty item: "" and "12," end with one.)
      std::string text = v;
      if (text.empty() || text.back() == ',')
        text += ",";
      std::stringstream list(text);
      for (std::string one; std::getline(list, one, ',');) {
        int pid = 0;
        if (std::string why = parse_pid(one.c_str(), pid); !why.empty()) {
          error = why;
          usage = false;
          return std::nullopt;
        }
        if (std::find(o.pids.begin(), o.pids.end(), pid) == o.pids.end())
          o.pids.push_back(pid);
      }
    } else if (a == "-l" || a == "-lv" || a == "-vl") {
      o.list = true;
      if (a.size() == 3)
        o.verbose++;
      if (i + 1 < argc && argv[i + 1][0] != '-')
        o.list_pattern = argv[++i];
    } else if (a == "-f") {
      const char *v = need(i, "-f");
      if (!v)
        return std::nullopt;
      o.output_format = v;
      if (!output::find_output_format(o.output_format)) {
        // bpftrace's words; the usage after it lists the formats.
        error = "Invalid output format \"" + o.output_format + "\"";
        return std::nullopt;
      }
    } else if (a == "-o" || a == "--output") {
      const char *v = need(i, a.c_str());
      if (!v)
        return std::nullopt;
      o.output_file = v;
    } else if (a == "-B") {
      const char *v = need(i, "-B");
      if (!v)
        return std::nullopt;
      o.buffering = v;
      if (o.buffering != "line" && o.buffering != "full" &&
          o.buffering != "none") {
        error = "invalid buffering mode '" + o.buffering +
                "': use line, full or none";
        return std::nullopt;
      }
    } else if (a == "-d" || a == "--debug") {
      const char *v = need(i, a.c_str());
      if (!v)
        return std::nullopt;
      std::stringstream ss(v);
      std::string stage;
      while (std::getline(ss, stage, ',')) {
        if (stage != "ast" && stage != "types" && stage != "ir" &&
            stage != "bpf" && stage != "all") {
          error = "invalid debug stage '" + stage +
                  "': use ast, types, ir, bpf or all";
          return std::nullopt;
        }
        o.debug_stages.push_back(stage);
      }
    } else if (a == "-I") {
      const char *v = need(i, "-I");
      if (!v)
        return std::nullopt;
      o.include_dirs.push_back(v);
    } else if (a.rfind("-I", 0) == 0) {
      o.include_dirs.push_back(a.substr(2));
    } else if (a == "--include") {
      const char *v = need(i, "--include");
      if (!v)
        return std::nullopt;
      o.include_files.push_back(v);
    } else if (a == "--metrics" || a.rfind("--metrics=", 0) == 0) {
      if (a.size() > 9) {
        o.metrics_listen = a.substr(10);
      } else {
        const char *v = need(i, "--metrics");
        if (!v)
          return std::nullopt;
        o.metrics_listen = v;
      }
    } else if (a == "--debuginfo" || a.rfind("--debuginfo=", 0) == 0) {
      if (a.size() > 11) {
        o.debuginfo_dirs.push_back(a.substr(12));
      } else {
        const char *v = need(i, "--debuginfo");
        if (!v)
          return std::nullopt;
        o.debuginfo_dirs.push_back(v);
      }
      if (o.debuginfo_dirs.back().empty()) {
        error = "--debuginfo needs a directory";
        return std::nullopt;
      }
    } else if (a == "--probe-filter") {
      const char *v = need(i, "--probe-filter");
      if (!v)
        return std::nullopt;
      o.probe_filter = v;
    } else if (a == "--emit-elf") {
      const char *v = need(i, "--emit-elf");
      if (!v)
        return std::nullopt;
      o.emit_elf = v;
    } else if (a == "-q") {
      o.quiet = true;
    } else if (a == "-v") {
      o.verbose++;
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--follow") {
      o.follow = true;
    } else if (a == "--unsafe") {
      o.unsafe = true;
    } else if (a == "--bench") {
      o.bench = true;
    } else if (a == "--test") {
      o.test = true;
    } else if (a == "--mode" || a.starts_with("--mode=")) {
      std::string mode;
      if (a == "--mode") {
        const char *v = need(i, "--mode");
        if (!v)
          return std::nullopt;
        mode = v;
      } else {
        mode = a.substr(7);
      }
      if (mode == "bench") {
        o.bench = true;
      } else if (mode == "test") {
        o.test = true;
      } else if (mode != "run") {
        usage = false;
        error = "--mode " + mode +
                " is not supported: ubtrace runs the "
                "modes run, bench and test";
        return std::nullopt;
      }
    } else if (a == "--no-warnings") {
      o.no_warnings = true;
    } else if (a == "--info") {
      o.info = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "-V" || a == "--version") {
      o.version = true;
    } else if (a == "-k" || a == "--warnings" || a == "-kk") {
      // bpftrace's words for the conflicts.
      usage = false;
      if (o.helper_errors || a == "-kk") {
        error = "USAGE: -kk has been deprecated. Use a single -k for runtime "
                "warnings for errors in map lookups and probe reads.";
        return std::nullopt;
      }
      o.helper_errors = true;
    } else if (a == "--usdt-file-activation") {
      // bpftrace's spelling that changes nothing here.
    } else {
      error = "unknown option: " + a;
      return std::nullopt;
    }
  }

  if (o.help || o.version || o.info)
    return o;
  if (o.helper_errors && o.no_warnings) {
    usage = false;
    error = "USAGE: -k, --warnings conflicts with --no-warnings";
    return std::nullopt;
  }
  if (!o.command.empty() && !o.pids.empty()) {
    error = "Cannot use both -c and -p.";
    return std::nullopt;
  }
  if (o.follow && o.command.empty()) {
    usage = false;
    error = "--follow follows the process tree of a command: use it with "
            "-c 'CMD'";
    return std::nullopt;
  }
  if (o.list && o.pids.size() > 1) {
    usage = false;
    error = "-l lists the probes of one process: give one -p PID";
    return std::nullopt;
  }
  if (const auto *f = output::find_output_format(o.output_format);
      f && f->needs_file && o.output_file.empty() && !o.list) {
    usage = false;
    error = "-f " + o.output_format +
            " writes a binary file: name it with -o FILE (standard output "
            "carries the traced program's output and printf's)";
    return std::nullopt;
  }

  size_t next = 0;
  if (!have_program && !o.list) {
    if (rest.empty()) {
      error = "no program given: use -e 'PROGRAM', a FILE, or - for stdin";
      return std::nullopt;
    }
    const std::string &file = rest[next++];
    if (file == "-") {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      o.program = ss.str();
      o.program_name = "stdin";
    } else {
      if (!read_file(file, o.program)) {
        // bpftrace's words, and no usage: the file is what is wrong.
        usage = false;
        error = "failed to open file '" + file + "': " + std::strerror(errno);
        return std::nullopt;
      }
      o.program_name = file;
    }
  }
  if (o.list && !have_program && next < rest.size() && o.list_pattern.empty())
    o.list_pattern = rest[next++];
  for (; next < rest.size(); next++)
    o.positional.push_back(rest[next]);
  return o;
}

} // namespace ubtrace::cli
