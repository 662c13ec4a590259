#include "tests/unit/session/stress_target.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <thread>

namespace ubtrace::session_test {

using namespace std::chrono_literals;

constexpr size_t kCheckedBytes = 16;

const std::vector<std::string> kStressCounts = {
    "@mix_entry",  "@mix_return", "@rip_entry",  "@jcc_entry",
    "@jcc_return", "@tiny_entry", "@tiny_return"};

// Every probe counts its hits and raises its flag; the last one hooked
// (uretprobe:stress_tiny: probes are hooked in script order) calls exit()
// once every flag is up and it has run a few more times. @n is updated
// racily on purpose: the first write of a value >= 20 must have read 19,
// so that thread (and maybe a few racing ones) calls exit(). stress_mix
// gets (a, a+1, ..., a+5): a probe that reads other values sees registers
// the hook damaged. The interval probe only ends a session whose probes
// stopped firing, so that the test fails instead of hanging.
std::string stress_script() {
  const std::string t = kStressTarget;
  return "uprobe:" + t +
         ":stress_mix { @mix_entry = count(); @s1 = 1;"
         "  if (arg5 != arg0 + 5 || arg3 != arg2 + 1) { @bad_args = count(); } "
         "}\n"
         "uretprobe:" +
         t +
         ":stress_mix { @mix_return = count(); @s2 = 1; }\n"
         "uprobe:" +
         t +
         ":stress_rip { @rip_entry = count(); @s3 = 1; }\n"
         "uprobe:" +
         t +
         ":stress_jcc { @jcc_entry = count(); @s4 = 1; }\n"
         "uretprobe:" +
         t +
         ":stress_jcc { @jcc_return = count(); @s5 = 1; }\n"
         "uprobe:" +
         t +
         ":stress_tiny { @tiny_entry = count(); @s6 = 1; }\n"
         "uretprobe:" +
         t +
         ":stress_tiny { @tiny_return = count();\n"
         "  if (@s1 && @s2 && @s3 && @s4 && @s5 && @s6) {\n"
         "    $v = @n + 1; @n = $v; if ($v == 20) { exit(); } } }\n"
         "interval:s:20 { printf(\"guard: the probes stopped firing\\n\"); "
         "exit(); }\n";
}

std::string agent_library() {
  const char *v = getenv("UBTRACE_AGENT");
  return v && *v ? v : UBT_AGENT_LIBRARY;
}

int env_count(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

Result<StressTarget> StressTarget::start() {
  auto p =
      TargetProcess::start({kStressTarget, std::to_string(kStressThreads)});
  if (!p)
    return std::move(p).take_error();
  StressTarget t(std::move(*p));
  auto ready = t.process_.read_line(20s);
  if (!ready)
    return make_error("the target did not start");
  int threads = 0;
  unsigned long long a[4];
  if (std::sscanf(ready->c_str(), "ready %d %llx %llx %llx %llx", &threads,
                  &a[0], &a[1], &a[2], &a[3]) != 5 ||
      threads != kStressThreads)
    return make_error("unexpected first line: " + *ready);
  const char *names[] = {"stress_mix", "stress_rip", "stress_jcc",
                         "stress_tiny"};
  for (size_t i = 0; i < 4; i++) {
    auto bytes = t.process_.read_memory(a[i], kCheckedBytes);
    if (!bytes)
      return std::move(bytes).take_error();
    t.functions_.push_back({names[i], a[i], std::move(*bytes)});
  }
  return t;
}

std::string StressTarget::code_changes() const {
  std::string changes;
  for (const auto &f : functions_) {
    auto now = process_.read_memory(f.address, kCheckedBytes);
    if (!now)
      changes += f.name + ": " + now.error() + "\n";
    else if (*now != f.bytes)
      changes +=
          f.name + ": its first bytes differ from before the first attach\n";
  }
  return changes;
}

std::string StressTarget::finish(std::string &report) {
  process_.close_stdin();
  for (const auto &l : process_.read_remaining(120s))
    report += l + "\n";
  auto status = process_.wait_exit(120s);
  if (!status)
    return "the target did not exit";
  if (!WIFEXITED(*status))
    return "the target died (signal " +
           std::to_string(WIFSIGNALED(*status) ? WTERMSIG(*status) : 0) + ")";
  if (WEXITSTATUS(*status) != 0)
    return "the target exited " + std::to_string(WEXITSTATUS(*status));
  if (report.find("wrong 0\n") == std::string::npos ||
      report.find("code intact\n") == std::string::npos)
    return "the target's report lacks its verdict";
  return "";
}

void StressTarget::expect_clean_end(size_t descriptors_before) {
  for (int i = 0;
       i < 2000 && process_.open_descriptors() > descriptors_before; i++)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(process_.open_descriptors(), descriptors_before);
  std::string report;
  EXPECT_EQ(finish(report), "") << report;
  std::printf("target: %s", report.c_str());
}

} // namespace ubtrace::session_test
