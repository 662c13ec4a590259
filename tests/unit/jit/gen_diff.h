// One generated program (tests/fuzz/jit_program_gen.h) in both engines, each
// with its own real maps: r0, ctx, maps, events and the record() log must
// agree. Shared by the gtest and the libFuzzer target.
#pragma once

#include "runtime/vm/insn.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::jit::test {

struct GenDiffStats {
  uint64_t programs = 0;
  uint64_t helper_calls = 0; // record() calls seen in the interpreter
};

// Empty when both engines agree, else what differs and the listing. A
// program the verifier refuses is a generator bug and reported as such.
std::string diff_generated(std::span<const vm::Insn> insns,
                           const std::vector<uint8_t> &ctx,
                           GenDiffStats *stats = nullptr);

} // namespace ubtrace::jit::test
