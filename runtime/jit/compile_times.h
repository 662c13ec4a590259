// Where a JIT compile spends its time (wall clock of the compiling thread).
#pragma once

#include <chrono>
#include <cstdint>

namespace ubtrace::jit {

struct CompileTimes {
  uint64_t lift_ns = 0;     // VerifiedProgram -> IR
  uint64_t optimize_ns = 0; // the IR pipeline
  uint64_t codegen_ns = 0;  // IR -> machine code (and, in ORC, linked)
  uint64_t total_ns() const { return lift_ns + optimize_ns + codegen_ns; }
};

inline uint64_t steady_now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

} // namespace ubtrace::jit
