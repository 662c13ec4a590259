// tests/testprogs/attach_stress running with its threads calling, as both
// stress tests use it: started, its functions' original bytes read from
// outside before any tracer comes, checked after each detach, and stopped
// at the end with its own verdict.
#pragma once

#include "runtime/bundle.h"
#include "runtime/result.h"
#include "tests/unit/session/target_process.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::session_test {

inline constexpr const char *kStressTarget = UBT_STRESS_TARGET;
inline constexpr int kStressThreads = 8;

// The script both tests run; kStressCounts are its count maps, one per
// probe, in the order the probes are hooked.
std::string stress_script();
extern const std::vector<std::string> kStressCounts;

class StressTarget {
public:
  static Result<StressTarget> start();

  TargetProcess &process() { return process_; }
  pid_t pid() const { return process_.pid(); }
  // "" when every probed function holds its original first bytes, else
  // what differs.
  std::string code_changes() const;
  // Closes its stdin and waits: "" when it exited 0 after reporting no
  // wrong result and intact code, else what went wrong with its report.
  std::string finish(std::string &report);
  // After the last session: the target's agent has closed what the sessions
  // opened (given up to 10 s to hang up on the last one), and finish()
  // reports nothing wrong. Failures are gtest failures; the report is
  // printed.
  void expect_clean_end(size_t descriptors_before);

private:
  explicit StressTarget(TargetProcess p) : process_(std::move(p)) {}
  struct Function {
    std::string name;
    uint64_t address = 0;
    std::vector<uint8_t> bytes; // before the first attach
  };
  TargetProcess process_;
  std::vector<Function> functions_;
};

// The agent the tests inject: $UBTRACE_AGENT (as for the CLI), else the
// one this tree built.
std::string agent_library();

// A number from the environment, or `fallback`.
int env_count(const char *name, int fallback);

} // namespace ubtrace::session_test
