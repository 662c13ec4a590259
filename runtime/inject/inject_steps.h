// The steps of an injection (injector.h), for the test hook that kills or
// stops the injector right after one of them: with
//   UBTRACE_TEST_INJECT_STOP=<step>        the injector SIGKILLs itself,
//   UBTRACE_TEST_INJECT_STOP=<step>:pause  it SIGSTOPs itself (the test
//                                          kills it when it wants),
// right after that step, so that tests can check the target survives a
// tracer that vanishes at every point of the protocol; with
//   UBTRACE_TEST_INJECT_TRACE_FD=<fd>      it writes each step's number
//                                          (one byte) there as it goes,
// so that a test killing it at random knows how far it got. Unset:
// nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace ubtrace::runtime::inject {

enum class InjectStep : int {
  Located = 1,      // glibc found in the target, functions resolved
  Seized = 2,       // a candidate thread is under PTRACE_SEIZE
  Stopped = 3,      // it is stopped (PTRACE_INTERRUPT)
  Chosen = 4,       // its state is read and it will be used
  CaveWritten = 5,  // the bootstrap code is in the code cave
  FrameWritten = 6, // the bootstrap frame is on its stack
  Committed = 7,    // PTRACE_SETREGS done, not yet detached
  Detached = 8,     // the thread runs the stub on its own
  RegionSeen = 9,   // the stub's region is there
  ResultSeen = 10,  // the load's outcome is in the block, not yet acked
  Acked = 11,       // the injector told the target it read the outcome
};
constexpr int kInjectSteps = 11;

std::string_view inject_step_name(InjectStep step);
// For test parameters.
inline void PrintTo(InjectStep step, std::ostream *out) {
  *out << inject_step_name(step);
}

// Called by the injector after each step.
void reached(InjectStep step);

// UBTRACE_TEST_INJECT_REGION=<hex address>: where the first attempt maps
// its region (a test maps something there first, to see the stub find the
// address taken and the injector try elsewhere).
std::optional<uint64_t> test_region_address();

} // namespace ubtrace::runtime::inject
