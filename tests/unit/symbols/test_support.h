// Helpers for the symbols tests: where the test programs are, and a child
// process the test talks to through its stdin and stdout.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::symbols_test {

// The path of a program built for these tests (tests/unit/symbols/progs).
std::string prog(const std::string &name);
bool file_exists(const std::string &path);

// Runs `argv`, captures its output and exit status (for readelf, bpftrace).
struct CommandOutput {
  int status = -1;
  std::string out;
};
CommandOutput run_command(const std::vector<std::string> &argv);

// A program started with its stdin and stdout connected to the test.
class Child {
public:
  explicit Child(const std::string &path);
  ~Child();
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  // The next line of output, without its newline; nullopt at EOF.
  std::optional<std::string> read_line();
  // Lines up to "ready" (not included).
  std::vector<std::string> read_until_ready();
  void write(const std::string &text);
  // Closes stdin (the programs exit at EOF) and reaps the child.
  int finish();

private:
  pid_t pid_ = -1;
  int in_fd_ = -1;  // the child's stdin
  int out_fd_ = -1; // the child's stdout
  std::string buffer_;
};

// "NAME 0xADDR" lines into a map.
std::map<std::string, uint64_t>
parse_addresses(const std::vector<std::string> &lines);

// Reads process memory through /proc/PID/mem.
bool read_process_memory(pid_t pid, uint64_t addr, void *out, size_t size);
bool write_process_memory(pid_t pid, uint64_t addr, const void *in,
                          size_t size);

// Whether bpftrace (the oracle) can list probes here: present, and we are
// root. The reason when not.
std::optional<std::string> bpftrace_unavailable();

} // namespace ubtrace::symbols_test
