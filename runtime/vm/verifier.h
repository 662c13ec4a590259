// The verifier: proves once, at load, that a linked program is safe to run in
// the VM (interpreter or JIT): every register read is initialised, every
// memory access stays inside the object it points to, NULL map values are
// checked, helpers get the arguments they expect, and every loop ends.
// It is a path-sensitive abstract interpretation in the style of the kernel
// verifier; a rejection names the exact PC and why, e.g.
//   "PC 12: invalid read from uninitialized register r3".
#pragma once

#include "runtime/result.h"
#include "runtime/vm/helpers.h"
#include "runtime/vm/object.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::vm {

// What the program's context (r1 at entry) points to.
struct ContextInfo {
  uint32_t size = 0;     // readable bytes
  bool writable = false; // may the program store into it
  // The kernel rejects ctx + variable offset; a backend whose ctx is plain
  // memory may allow bounded variable offsets.
  bool allow_variable_offset = false;
};

// x86-64 `struct pt_regs` (21 u64 registers): the ctx of uprobe programs.
inline constexpr ContextInfo kPtRegsContext{168, false, false};

struct VerifierOptions {
  // Instructions the abstract interpretation may step through in all, like
  // the kernel's 1M limit; loops are unrolled within it.
  uint32_t max_processed_insns = 1'000'000;
  // Checkpoints kept per instruction; beyond it the least useful go.
  uint32_t max_checkpoints_per_insn = 1024;
  // Rounds a helper's callback may take to reach a fixed point.
  uint32_t max_callback_rounds = 32;
  // When set, the verifier appends a line per instruction it steps through
  // (pc, disassembly, registers) and per pruning decision. For debugging.
  std::string *log = nullptr;
};

struct SubprogInfo {
  uint32_t start = 0;       // first instruction
  uint32_t end = 0;         // one past the last
  uint32_t stack_depth = 0; // bytes of its frame it touches (<= 512)
  bool is_callback = false; // entered by a helper (bpf_loop, for_each)
};

// Facts about one helper call site the JIT and interpreter use.
struct HelperCallSite {
  uint32_t pc = 0;
  int32_t helper = 0;
  int32_t map = -1;      // for_each_map_elem: the map iterated
  int32_t callback = -1; // loop/for_each: the callback's entry pc
};

struct VerifierStats {
  uint64_t processed_insns = 0;
  uint64_t checkpoints = 0;
  uint64_t pruned = 0;
};

struct VerifiedProgram {
  std::string name;
  std::vector<Insn> insns;
  std::vector<SubprogInfo> subprogs;        // [0] is the program itself
  std::vector<HelperCallSite> helper_calls; // every reachable helper call
  std::vector<uint32_t> maps_used;          // map indices referenced
  ContextInfo ctx;
  // The bytes of ctx some path may read, [ctx_read_lo, ctx_read_hi) (none
  // when lo >= hi); a helper handed ctx counts as reading all of it. A
  // backend that fills ctx at a cost asks it what is read.
  uint32_t ctx_read_lo = UINT32_MAX, ctx_read_hi = 0;
  VerifierStats stats;
};

Result<VerifiedProgram> verify(const Program &program,
                               std::span<const MapDef> maps,
                               const HelperTable &helpers,
                               const ContextInfo &ctx,
                               const VerifierOptions &options = {});

} // namespace ubtrace::vm
