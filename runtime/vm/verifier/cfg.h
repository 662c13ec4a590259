// The structural pass: every instruction well-formed, every jump and call
// inside its function, no fall-through off a function. It also finds the
// subprograms, the prune points and register liveness the abstract
// interpretation needs.
#pragma once

#include "runtime/result.h"
#include "runtime/vm/helpers.h"
#include "runtime/vm/insn.h"
#include "runtime/vm/object.h"
#include "runtime/vm/verifier/state.h"

#include <span>
#include <vector>

namespace ubtrace::vm::verifier {

struct Cfg {
  struct Subprog {
    uint32_t start = 0;
    uint32_t end = 0;
  };
  std::vector<Subprog> subprogs;        // sorted by start; [0] starts at 0
  std::vector<uint32_t> subprog_of;     // per pc
  std::vector<bool> prune_point;        // per pc
  std::vector<LiveRegs> live_in;        // per pc
  std::vector<LiveRegs> relevant_regs;  // per pc, see relevance.h
  std::vector<uint64_t> relevant_slots; // per pc, see relevance.h
  std::vector<bool> second_half;        // per pc: second slot of ld_imm64

  // The subprogram starting at `pc`, or -1.
  int subprog_at(uint32_t pc) const;
};

Result<Cfg> build_cfg(std::span<const Insn> insns, std::span<const MapDef> maps,
                      const HelperTable &helpers);

} // namespace ubtrace::vm::verifier
