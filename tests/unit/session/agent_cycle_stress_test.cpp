// Thousands of attach/detach cycles through the agent in a real process
// whose 8 threads never stop calling the probed functions.
//
// A whole CLI session costs a few hundred milliseconds here (ptrace
// injection, LLVM compiling the probes), so thousands of them would take
// many minutes: whole_session_stress_test.cpp runs tens. This test runs
// the part that races with the target's threads thousands of times: the
// CLI's end of the agent protocol (agent_session.h, as the CLI drives it)
// hooks every probe, lets them fire, detaches, and again, on one channel;
// every few hundred cycles it hangs up and injects again (the agent is
// loaded by then: the injector calls its entry), so the agent's end of
// session (code, programs and maps released) and a fresh start are in the
// mix too. The probes run as native code compiled for the target.
//
// Each cycle checks: the agent hooked with jumps and with an int3 trap
// (the 4-byte function); every one of the seven probes fired (its count in
// the maps region grew); after detach, the functions' first bytes are the
// original ones (read from outside, /proc/PID/mem) and no probe runs any
// more (the counts stay as they were until the next hook). At the end: no
// probe saw damaged arguments, no descriptor leaked on either side, and
// the target's threads report no wrong result, matching sums and intact
// code, and it exits 0.
//
// UBT_STRESS_CYCLES overrides the number of cycles (default 2000),
// UBT_STRESS_CYCLES_PER_SESSION how many share a channel (default 250).
#include "backends/program_set.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/region.h"
#include "runtime/maps/spec_layout.h"
#include "tests/unit/session/agent_session.h"
#include "tests/unit/jit/script_bundle.h"
#include "tests/unit/session/stress_target.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

namespace ubtrace::session_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The value of a count() map: its i64 slots summed.
uint64_t count_of(const runtime::maps::Region &region, uint32_t map) {
  auto snap = runtime::maps::snapshot(region.map(map));
  uint64_t total = 0;
  for (size_t i = 0; i < snap.entries; i++)
    for (uint32_t s = 0; s < snap.info.slots; s++) {
      int64_t v = 0;
      std::memcpy(&v, snap.value(i, s).data(), sizeof v);
      total += static_cast<uint64_t>(v);
    }
  return total;
}

std::string describe(const std::vector<uint64_t> &counts) {
  std::string text;
  for (size_t i = 0; i < counts.size(); i++)
    text += " " + kStressCounts[i] + "=" + std::to_string(counts[i]);
  return text;
}

// A maps region and the programs bound to it: what one CLI session owns.
struct SessionMaps {
  std::unique_ptr<runtime::maps::Region> region;
  std::unique_ptr<backends::ProgramSet> programs;
};

Result<SessionMaps> make_maps(const runtime::Bundle &bundle) {
  auto layouts = runtime::maps::layouts_for(bundle.maps);
  if (!layouts)
    return std::move(layouts).take_error();
  auto region = runtime::maps::Region::create(*layouts);
  if (!region)
    return std::move(region).take_error();
  SessionMaps m;
  m.region = std::make_unique<runtime::maps::Region>(std::move(*region));
  auto programs = backends::ProgramSet::load(bundle, *m.region);
  if (!programs)
    return std::move(programs).take_error();
  m.programs = std::make_unique<backends::ProgramSet>(std::move(*programs));
  return m;
}

// Opens a session; an agent still ending the previous one (on its own
// thread, after the hang-up) refuses for a moment: try again.
Result<AgentSession> open_session(pid_t pid, const runtime::Bundle &bundle,
                                  const SessionMaps &maps,
                                  size_t &busy_retries) {
  for (int attempt = 0;; attempt++) {
    auto s = AgentSession::open(pid, agent_library(), bundle, *maps.programs,
                                *maps.region);
    if (s || attempt == 5000 || s.error().find("busy") == std::string::npos)
      return s;
    busy_retries++;
    std::this_thread::sleep_for(1ms);
  }
}

TEST(SessionStress, ThousandsOfHookCyclesWhileEightThreadsCall) {
  const int cycles = env_count("UBT_STRESS_CYCLES", 2000);
  const int per_session = env_count("UBT_STRESS_CYCLES_PER_SESSION", 250);
  ASSERT_GT(cycles, 0);
  ASSERT_GT(per_session, 0);
  auto bundle = jit::test::compile_script(stress_script());
  ASSERT_TRUE(bundle) << bundle.error();
  auto map_index = [&](const std::string &name) {
    for (size_t i = 0; i < bundle->maps.size(); i++)
      if (bundle->maps[i].name == name)
        return static_cast<uint32_t>(i);
    ADD_FAILURE() << "no map " << name;
    return uint32_t(0);
  };
  std::vector<uint32_t> count_maps;
  for (const auto &name : kStressCounts)
    count_maps.push_back(map_index(name));
  const uint32_t bad_args = map_index("@bad_args");

  auto target = StressTarget::start();
  ASSERT_TRUE(target) << target.error();
  const size_t target_fds_before = target->process().open_descriptors();

  std::vector<uint64_t> totals(count_maps.size(), 0);
  size_t busy_retries = 0, own_fds_after_first = 0, sessions = 0;
  int done = 0;
  auto start = Clock::now();
  while (done < cycles) {
    // (Counted once the first session is over: lazy set-up on the way,
    // LLVM's included, may keep descriptors of its own.)
    if (sessions == 1)
      own_fds_after_first = own_descriptors();
    auto maps = make_maps(*bundle);
    ASSERT_TRUE(maps) << maps.error();
    auto session = open_session(target->pid(), *bundle, *maps, busy_retries);
    ASSERT_TRUE(session) << "session " << sessions << ", after " << done
                         << " cycles: " << session.error();
    sessions++;
    auto counts = [&] {
      std::vector<uint64_t> c;
      for (uint32_t m : count_maps)
        c.push_back(count_of(*maps->region, m));
      return c;
    };
    std::vector<uint64_t> after_detach = counts();
    for (int c = 0; c < per_session && done < cycles; c++, done++) {
      ASSERT_TRUE(target->process().running())
          << "before cycle " << done << ": the target "
          << target->process().state();
      std::vector<uint64_t> before = counts();
      ASSERT_EQ(before, after_detach)
          << "probes ran after the detach of cycle " << done - 1 << ":"
          << describe(before) << " after," << describe(after_detach)
          << " at the detach";

      auto hooked = session->hook_all();
      ASSERT_TRUE(hooked) << "cycle " << done << ": " << hooked.error()
                          << "; the target " << target->process().state();
      ASSERT_GT(hooked->jumps, 0u) << "cycle " << done;
      ASSERT_GT(hooked->traps, 0u) << "cycle " << done;
      // Every probe fires: the threads keep calling all four functions.
      std::vector<uint64_t> now = counts();
      for (auto deadline = Clock::now() + 20s; Clock::now() < deadline;) {
        bool all = true;
        for (size_t i = 0; i < now.size(); i++)
          all &= now[i] > before[i];
        if (all)
          break;
        std::this_thread::sleep_for(100us);
        now = counts();
      }
      for (size_t i = 0; i < now.size(); i++)
        ASSERT_GT(now[i], before[i])
            << kStressCounts[i] << " did not fire in cycle " << done;

      auto detached = session->detach();
      ASSERT_TRUE(detached) << "cycle " << done << ": " << detached.error()
                            << "; the target " << target->process().state();
      after_detach = counts();
      for (size_t i = 0; i < totals.size(); i++)
        totals[i] += after_detach[i] - before[i];
      ASSERT_EQ(target->code_changes(), "")
          << "after the detach of cycle " << done;
    }
    EXPECT_EQ(count_of(*maps->region, bad_args), 0u)
        << "a probe saw arguments other than the caller passed";
    session->close();
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%d hook/detach cycles in %zu sessions in %.1f s (%.1f cycles "
              "per second), "
              "%zu busy retries\n",
              done, sessions, seconds, done / seconds, busy_retries);
  for (size_t i = 0; i < totals.size(); i++)
    std::printf("  %-13s %" PRIu64 " hits\n", kStressCounts[i].c_str(),
                totals[i]);

  if (sessions > 1)
    EXPECT_EQ(own_descriptors(), own_fds_after_first);
  target->expect_clean_end(target_fds_before);
}

} // namespace
} // namespace ubtrace::session_test
