// The abstract interpreter: walks every path of the program from a state at
// each instruction, checking it with one function per instruction class
// (check_*.cpp, all of the same shape). Paths meet at prune points, where a
// state covered by an already-verified one stops; loops are unrolled, an
// identical state around a loop is an infinite loop, and a budget bounds it
// all.
#pragma once

#include "runtime/vm/verifier.h"
#include "runtime/vm/verifier/cfg.h"
#include "runtime/vm/verifier/state.h"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

namespace ubtrace::vm::verifier {

// What happens to the current path after an instruction.
enum class Step : uint8_t {
  Continue, // state.pc holds the next instruction
  Done,     // the path ended (program exit)
};

class Engine {
public:
  Engine(const Program &program, std::span<const MapDef> maps,
         const HelperTable &helpers, const ContextInfo &ctx,
         const VerifierOptions &options, const Cfg &cfg);

  Result<VerifiedProgram> run();

  // --- for the per-class checks ---
  const Insn &insn(uint32_t pc) const { return insns_[pc]; }
  uint32_t insn_count() const { return uint32_t(insns_.size()); }
  const MapDef &map(uint32_t index) const { return maps_[index]; }
  const HelperTable &helpers() const { return helpers_; }
  const ContextInfo &ctx() const { return ctx_; }
  const Cfg &cfg() const { return cfg_; }
  const VerifierOptions &options() const { return options_; }
  uint32_t new_id() { return ++last_id_; }

  // Continue another path later from `state` (a conditional branch or a
  // callback's next round); counts backward jumps.
  void push_branch(State state, uint32_t from_pc);
  // Count a backward jump taken from `pc`.
  void count_back_edge(uint32_t pc);
  // The frame `state.frames[frame]` touched `bytes` below its frame pointer.
  void note_stack_depth(const State &state, uint32_t frame, int64_t bytes);
  // A helper call site seen on some path; conflicting facts are an error.
  Result<void> note_helper_call(uint32_t pc, int32_t helper, int32_t map,
                                int32_t callback);

  // Stack liveness: slots [lo, hi) (frame-pointer offsets) of frame
  // `frame` were read / wholly written on the current path.
  void note_stack_read(State &state, uint32_t frame, int64_t lo, int64_t hi);
  void note_stack_written(State &state, uint32_t frame, int64_t lo, int64_t hi);
  // A helper's callback runs this subprogram.
  void mark_callback(uint32_t subprog);
  // Some path may read ctx bytes [lo, hi) (VerifiedProgram::ctx_read_lo).
  void note_ctx_read(int64_t lo, int64_t hi);

  // Registers: an uninitialised read is the most common rejection.
  Result<void> check_readable(const State &state, int regno) const;

private:
  enum class Visit : uint8_t { Continue, Prune };
  Result<Visit> visit_prune_point(State &state);
  Result<Step> step(State &state);
  void finish_path(State &state);
  void complete(Checkpoint *c);
  void mark_read(State &state, uint32_t frame, uint64_t slots);
  void evict(Checkpoint *c);
  std::vector<FrameView> frame_views(const State &state) const;
  Error budget_error(uint32_t pc) const;

  std::span<const Insn> insns_;
  const Program &program_;
  std::span<const MapDef> maps_;
  const HelperTable &helpers_;
  ContextInfo ctx_;
  VerifierOptions options_;
  const Cfg &cfg_;

  std::vector<State> pending_;
  std::deque<Checkpoint> checkpoint_pool_;
  // Per pc: checkpoints whose paths all finished (prune candidates), and
  // those still in progress (ancestors of the current path), the latter
  // also by (pc, fingerprint) to find a repeated state fast.
  std::vector<std::vector<Checkpoint *>> complete_;
  std::vector<std::vector<Checkpoint *>> ancestors_;
  std::unordered_multimap<uint64_t, Checkpoint *> ancestors_by_print_;
  std::vector<uint64_t> back_edges_;  // per pc
  std::vector<uint32_t> stack_depth_; // per subprog
  std::vector<bool> is_callback_;     // per subprog
  std::vector<HelperCallSite> helper_calls_;
  uint32_t ctx_read_lo_ = UINT32_MAX, ctx_read_hi_ = 0;
  std::vector<bool> maps_used_;
  uint32_t last_id_ = 0;
  VerifierStats stats_;
};

Error fail_at(uint32_t pc, const std::string &what);

// One function per instruction class. Each checks the instruction at
// state.pc against `state`, updates `state` to what holds after it, and
// either moves state.pc on or ends the path.
Result<Step> check_alu(Engine &engine, State &state, const Insn &insn);
Result<Step> check_jmp(Engine &engine, State &state, const Insn &insn);
Result<Step> check_call(Engine &engine, State &state, const Insn &insn);
Result<Step> check_exit(Engine &engine, State &state, const Insn &insn);
Result<Step> check_ldx(Engine &engine, State &state, const Insn &insn);
Result<Step> check_st(Engine &engine, State &state, const Insn &insn);
Result<Step> check_stx(Engine &engine, State &state, const Insn &insn);
Result<Step> check_ld_imm64(Engine &engine, State &state, const Insn &insn);

// Memory, shared by loads, stores, atomics and helper arguments.
enum class Access : uint8_t { Read, Write, HelperWrite };
// Checks [ptr + off, ptr + off + size) for `access` through register
// `regno` (holding `ptr`); size is a range for helper arguments.
Result<void> check_region(Engine &engine, State &state, int regno,
                          const Reg &ptr, int32_t off, uint64_t size,
                          Access access);
// What a load of `size` bytes at ptr + off yields (ptr already checked).
// Numbers come back from stack slots only through r10 itself (`via_fp`),
// the rule relevance.h relies on.
Reg load_value(Engine &engine, State &state, const Reg &ptr, int32_t off,
               int size, bool via_fp);
// Records a store of `value` (size bytes) at ptr + off (already checked).
// Unless `keep_value`, a number is stored as unknown initialised bytes.
void store_value(Engine &engine, State &state, const Reg &ptr, int32_t off,
                 int size, const Reg &value, bool keep_value);
// After a helper filled [ptr, ptr + size): those stack bytes are set.
void mark_helper_written(Engine &engine, State &state, const Reg &ptr,
                         uint64_t size);

// Every register and spill, in every frame, for bulk updates.
template <class Fn> void for_each_reg(State &state, Fn &&fn) {
  for (Frame &frame : state.frames) {
    for (Reg &reg : frame.regs)
      fn(reg);
    for (StackSlot &slot : frame.stack)
      if (slot.has_spill())
        fn(slot.spill);
  }
}

} // namespace ubtrace::vm::verifier
