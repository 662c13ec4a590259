// Which numbers matter. At a prune point, two states that differ only in
// scalars whose values can never reach a safety decision (a bound check, a
// pointer offset, a helper size, a branch) lead to the same verdict, so they
// may be compared by type alone. This is the static counterpart of the
// kernel verifier's precision tracking; without it every `x = c ? 1 : 2`
// doubles the paths.
//
// The analysis follows values through registers, through BPF-to-BPF calls,
// and through stack slots addressed via r10 itself. The verifier keeps the
// matching rule: a scalar stored through any other pointer is not
// remembered as a value (it becomes plain initialised bytes), and a load
// through any other pointer yields an unknown number.
#pragma once

#include "runtime/vm/helpers.h"
#include "runtime/vm/insn.h"
#include "runtime/vm/verifier/state.h"

#include <span>
#include <vector>

namespace ubtrace::vm::verifier {

struct Cfg;

struct Relevance {
  std::vector<LiveRegs> regs;  // per pc, before the instruction
  std::vector<uint64_t> slots; // per pc: bit i = fp slot [-8(i+1), -8i)
};

Relevance compute_relevance(std::span<const Insn> insns, const Cfg &cfg,
                            const HelperTable &helpers);

} // namespace ubtrace::vm::verifier
