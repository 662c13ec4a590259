// The dispatch loop: fetch, switch on the opcode, run the opcode's class's
// exec_* function. BPF-to-BPF calls push a frame record in this activation;
// helper callbacks re-enter execute() one frame deeper.
#include "runtime/vm/interpreter.h"

#include "runtime/vm/interp/exec_ops.h"

#include <algorithm>
#include <cerrno>

namespace ubtrace::vm {
namespace {

using interp::exec_alu32;
using interp::exec_alu64;
using interp::exec_jmp;
using interp::exec_jmp32;
using interp::exec_ldx;
using interp::exec_st;
using interp::exec_stx;

// One run: the program, the stack of all frames, the budget, the outcome.
struct Machine {
  const BoundProgram &program;
  uint8_t *stack; // kMaxCallFrames frames of kStackSize bytes
  uint64_t budget;
  uint64_t executed = 0;
  RunStatus status = RunStatus::Ok;
  uint32_t stop_pc = 0;

  uint64_t frame_pointer(int depth) const {
    return reinterpret_cast<uint64_t>(stack + size_t(depth + 1) * kStackSize);
  }
  bool failed() const { return status != RunStatus::Ok; }
  void stop(RunStatus why, uint32_t pc) {
    status = why;
    stop_pc = pc;
  }
};

uint64_t execute(Machine &m, uint32_t pc, uint64_t *regs, int depth);

// A callback invocation: a fresh frame one deeper than its caller.
uint64_t run_callback(Machine &m, uint32_t entry, int depth, uint64_t r1,
                      uint64_t r2, uint64_t r3, uint64_t r4) {
  uint64_t regs[kNumRegs] = {0, r1, r2, r3, r4};
  regs[kFramePointer] = m.frame_pointer(depth);
  return execute(m, entry, regs, depth);
}

uint64_t vm_loop(Machine &m, const uint64_t *regs, int depth) {
  uint32_t count = uint32_t(regs[1]);
  uint32_t entry = uint32_t(regs[2]);
  if (regs[4] != 0)
    return uint64_t(-int64_t(EINVAL));
  if (count > kMaxLoopIterations)
    return uint64_t(-int64_t(E2BIG));
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t stop = run_callback(m, entry, depth + 1, i, regs[3], 0, 0);
    if (m.failed())
      return 0;
    if (stop)
      return i + 1;
  }
  return count;
}

struct ForEachRun {
  Machine *machine;
  uint32_t entry;
  int depth;
  uint64_t map;
  uint64_t ctx;
};

long for_each_trampoline(void *, void *key, void *value, void *p) {
  auto *run = static_cast<ForEachRun *>(p);
  uint64_t stop = run_callback(*run->machine, run->entry, run->depth, run->map,
                               reinterpret_cast<uint64_t>(key),
                               reinterpret_cast<uint64_t>(value), run->ctx);
  return run->machine->failed() ? 1 : long(stop);
}

uint64_t vm_for_each(Machine &m, const uint64_t *regs, int depth, uint32_t pc) {
  int32_t index = m.program.for_each_map[pc];
  if (regs[4] != 0 || index < 0)
    return uint64_t(-int64_t(EINVAL));
  const MapBinding &map = m.program.maps[size_t(index)];
  ForEachRun run{&m, uint32_t(regs[2]), depth + 1, regs[1], regs[3]};
  return uint64_t(map.for_each(reinterpret_cast<void *>(regs[1]),
                               for_each_trampoline, &run));
}

// One instruction of opcode C other than call and exit; the next pc.
template <uint8_t C>
[[gnu::always_inline]] inline uint32_t step(const Insn &in, uint64_t *regs,
                                            uint32_t pc, const Insn *insns) {
  constexpr uint8_t cls = insn_class(C);
  if constexpr (cls == BPF_ALU64) {
    exec_alu64(C, in, regs);
    return pc + 1;
  } else if constexpr (cls == BPF_ALU) {
    exec_alu32(C, in, regs);
    return pc + 1;
  } else if constexpr (cls == BPF_LDX) {
    exec_ldx(C, in, regs);
    return pc + 1;
  } else if constexpr (cls == BPF_ST) {
    exec_st(C, in, regs);
    return pc + 1;
  } else if constexpr (cls == BPF_STX) {
    exec_stx(C, in, regs);
    return pc + 1;
  } else if constexpr (cls == BPF_LD) { // bind_program() left constants only
    regs[in.dst] = ld_imm64_value(in, insns[pc + 1]);
    return pc + 2;
  } else if constexpr (cls == BPF_JMP32) {
    return exec_jmp32(C, in, regs, pc);
  } else {
    return exec_jmp(C, in, regs, pc);
  }
}

// Where a BPF-to-BPF call returns to.
struct ReturnRecord {
  uint32_t pc;
  uint64_t saved[5]; // r6..r10
};

uint64_t execute(Machine &m, uint32_t pc, uint64_t *regs, int depth) {
  const Insn *insns = m.program.insns.data();
  ReturnRecord returns[kMaxCallFrames];
  int calls = 0;
  // The budget lives in a local between helper calls: stores through the
  // program's pointers could alias a field of `m` and force reloads.
  uint64_t left = m.budget - m.executed;
  auto sync = [&] { m.executed = m.budget - left; };
  for (;;) {
    if (left-- == 0) {
      m.executed = m.budget + 1;
      m.stop(RunStatus::InsnBudgetExceeded, pc);
      return 0;
    }
    const Insn &in = insns[pc];
    // One case per opcode: each runs its class's exec_* function with the
    // opcode as a constant, so the function's own switch folds away.
    switch (in.code) {
#define UBT_CASE(c)                                                            \
  case c:                                                                      \
    if constexpr (c == (BPF_JMP | BPF_CALL) || c == (BPF_JMP | BPF_EXIT))      \
      break;                                                                   \
    else {                                                                     \
      pc = step<c>(in, regs, pc, insns);                                       \
      continue;                                                                \
    }
#define UBT_CASES4(c)                                                          \
  UBT_CASE(c) UBT_CASE(c + 1) UBT_CASE(c + 2) UBT_CASE(c + 3)
#define UBT_CASES16(c)                                                         \
  UBT_CASES4(c) UBT_CASES4(c + 4) UBT_CASES4(c + 8) UBT_CASES4(c + 12)
#define UBT_CASES64(c)                                                         \
  UBT_CASES16(c) UBT_CASES16(c + 16) UBT_CASES16(c + 32) UBT_CASES16(c + 48)
      UBT_CASES64(0) UBT_CASES64(64) UBT_CASES64(128) UBT_CASES64(192)
#undef UBT_CASES64
#undef UBT_CASES16
#undef UBT_CASES4
#undef UBT_CASE
    }
    if (in.code == (BPF_JMP | BPF_CALL)) {
      if (in.src == BPF_PSEUDO_CALL) {
        ReturnRecord &ret = returns[calls++];
        ret.pc = pc + 1;
        for (int r = 0; r < 5; ++r)
          ret.saved[r] = regs[6 + r];
        ++depth;
        regs[kFramePointer] = m.frame_pointer(depth);
        pc = uint32_t(int64_t(pc) + 1 + in.imm);
        continue;
      }
      switch (in.imm) {
      case BPF_FUNC_loop:
        sync();
        regs[0] = vm_loop(m, regs, depth);
        left = m.budget - std::min(m.executed, m.budget);
        break;
      case BPF_FUNC_for_each_map_elem:
        sync();
        regs[0] = vm_for_each(m, regs, depth, pc);
        left = m.budget - std::min(m.executed, m.budget);
        break;
      default: {
        HelperFn fn = size_t(in.imm) < m.program.helpers.size()
                          ? m.program.helpers[size_t(in.imm)]
                          : nullptr;
        if (!fn) {
          sync();
          m.stop(RunStatus::MissingHelper, pc);
          return 0;
        }
        regs[0] = fn(regs[1], regs[2], regs[3], regs[4], regs[5]);
        break;
      }
      }
      if (m.failed())
        return 0;
      ++pc;
      continue;
    }
    // BPF_EXIT, the only other opcode the switch leaves here.
    if (calls == 0) {
      sync();
      return regs[0];
    }
    const ReturnRecord &ret = returns[--calls];
    for (int r = 0; r < 5; ++r)
      regs[6 + r] = ret.saved[r];
    --depth;
    pc = ret.pc;
  }
}

} // namespace

RunResult run(const BoundProgram &program, void *ctx,
              const RunOptions &options) {
  alignas(16) uint8_t stack[size_t(kMaxCallFrames) * kStackSize];
  Machine m{program, stack, options.max_insns};
  uint64_t regs[kNumRegs] = {};
  regs[1] = reinterpret_cast<uint64_t>(ctx);
  regs[kFramePointer] = m.frame_pointer(0);
  RunResult result;
  result.r0 = execute(m, 0, regs, 0);
  result.status = m.status;
  result.insns = m.executed;
  result.stop_pc = m.stop_pc;
  if (m.failed())
    result.r0 = 0;
  return result;
}

} // namespace ubtrace::vm
