#include "runtime/vm/verifier/relevance.h"

#include "runtime/vm/verifier/cfg.h"

namespace ubtrace::vm::verifier {
namespace {

constexpr LiveRegs bit(int r) {
  return LiveRegs(1u << r);
}
constexpr LiveRegs kArgs = 0x3e;        // r1..r5
constexpr LiveRegs kCallerSaved = 0x3f; // r0..r5

bool is_callback_target(std::span<const Insn> insns, const Cfg &cfg,
                        uint32_t start) {
  for (uint32_t pc = 0; pc + 1 < insns.size(); ++pc)
    if (!cfg.second_half[pc] && is_ld_imm64(insns[pc]) &&
        insns[pc].src == BPF_PSEUDO_FUNC &&
        int64_t(pc) + 1 + insns[pc].imm == int64_t(start))
      return true;
  return false;
}

bool returns_pointer(const HelperProto *proto) {
  return proto && proto->ret != RetKind::Integer;
}

// Stack slots an access of `size` bytes at r10 + off touches.
uint64_t slots_touched(int64_t off, int size) {
  uint64_t mask = 0;
  for (int64_t o = off; o < off + size; ++o)
    if (o >= -kStackSize && o < 0)
      mask |= uint64_t(1) << ((-o - 1) / 8);
  return mask;
}

// Slot fully overwritten by an aligned 8-byte store at r10 + off.
uint64_t slot_killed(int64_t off, int size) {
  if (size != 8 || off % 8 != 0 || off < -kStackSize || off >= 0)
    return 0;
  return uint64_t(1) << ((-off - 1) / 8);
}

// What a register may hold, forward: any pointer, and a stack pointer in
// particular (only loads through those can bring a spilled pointer back).
struct MayHold {
  LiveRegs ptr = 0;
  LiveRegs stack = 0;
  MayHold operator|(const MayHold &o) const {
    return {LiveRegs(ptr | o.ptr), LiveRegs(stack | o.stack)};
  }
  bool operator==(const MayHold &) const = default;
  void set(int r, bool is_ptr, bool is_stack) {
    ptr = LiveRegs((ptr & ~bit(r)) | (is_ptr ? bit(r) : 0));
    stack = LiveRegs((stack & ~bit(r)) | (is_stack ? bit(r) : 0));
  }
  void clear(LiveRegs regs) {
    ptr &= LiveRegs(~regs);
    stack &= LiveRegs(~regs);
  }
  bool has_ptr(int r) const { return ptr & bit(r); }
  bool has_stack(int r) const { return stack & bit(r); }
};

// Forward: which registers may hold a pointer before each instruction.
std::vector<LiveRegs> may_hold_pointers(std::span<const Insn> insns,
                                        const Cfg &cfg,
                                        const HelperTable &helpers,
                                        const std::vector<bool> &callback) {
  size_t n = insns.size();
  std::vector<MayHold> in(n);
  std::vector<MayHold> ret(cfg.subprogs.size());
  MayHold fp;
  fp.set(kFramePointer, true, true);
  in[0] = fp;
  in[0].set(1, true, false); // ctx
  for (size_t s = 0; s < cfg.subprogs.size(); ++s) {
    MayHold &entry = in[cfg.subprogs[s].start];
    entry = entry | fp;
    if (callback[s])
      entry = entry | MayHold{kArgs, kArgs};
  }
  auto flow = [&](int64_t to, const MayHold &regs, bool &changed) {
    if (to < 0 || size_t(to) >= n)
      return;
    MayHold merged = in[to] | regs;
    if (!(merged == in[to])) {
      in[to] = merged;
      changed = true;
    }
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = 0; pc < n; ++pc) {
      if (cfg.second_half[pc])
        continue;
      const Insn &i = insns[pc];
      const MayHold &cur = in[pc];
      MayHold out = cur;
      uint8_t cls = insn_class(i.code);
      uint8_t op = insn_op(i.code);
      bool reg_src = insn_source(i.code) == BPF_X;
      switch (cls) {
      case BPF_ALU64:
        if (op == BPF_MOV && reg_src && i.off == 0)
          out.set(i.dst, cur.has_ptr(i.src), cur.has_stack(i.src));
        else if (op == BPF_ADD || op == BPF_SUB)
          out.set(i.dst, cur.has_ptr(i.dst) || (reg_src && cur.has_ptr(i.src)),
                  cur.has_stack(i.dst) || (reg_src && cur.has_stack(i.src)));
        else
          out.set(i.dst, false, false);
        break;
      case BPF_ALU:
        out.set(i.dst, false, false);
        break;
      case BPF_LDX: {
        // Only a fill from the stack brings a pointer back.
        bool fill = insn_size(i.code) == BPF_DW && cur.has_stack(i.src);
        out.set(i.dst, fill, fill);
        break;
      }
      case BPF_LD:
        out.set(i.dst, i.src != 0, false);
        break;
      case BPF_STX:
        if (insn_mode(i.code) == BPF_ATOMIC) {
          if (i.imm == BPF_CMPXCHG)
            out.set(0, false, false);
          else if (i.imm & BPF_FETCH)
            out.set(i.src, false, false);
        }
        break;
      case BPF_ST:
        break;
      case BPF_JMP:
      case BPF_JMP32:
        if (op == BPF_EXIT) {
          MayHold &r = ret[cfg.subprog_of[pc]];
          MayHold merged = r;
          merged.set(0, r.has_ptr(0) || cur.has_ptr(0),
                     r.has_stack(0) || cur.has_stack(0));
          if (!(merged == r)) {
            r = merged;
            changed = true;
          }
          continue;
        }
        if (op == BPF_CALL) {
          out.clear(kCallerSaved);
          if (i.src == BPF_PSEUDO_CALL) {
            int64_t target = int64_t(pc) + 1 + i.imm;
            MayHold args = cur;
            args.ptr &= kArgs;
            args.stack &= kArgs;
            flow(target, args | fp, changed);
            int callee = cfg.subprog_at(uint32_t(target));
            if (callee >= 0)
              out.set(0, ret[callee].has_ptr(0), ret[callee].has_stack(0));
          } else if (returns_pointer(helpers.find(i.imm))) {
            out.set(0, true, false);
          }
        }
        break;
      }
      if (is_jump(i)) {
        flow(jump_target(i, pc), out, changed);
        if (!is_unconditional_jump(i))
          flow(int64_t(pc) + 1, out, changed);
      } else {
        flow(int64_t(pc) + (is_ld_imm64(i) ? 2 : 1), out, changed);
      }
    }
  }
  std::vector<LiveRegs> ptr(n);
  for (size_t pc = 0; pc < n; ++pc)
    ptr[pc] = in[pc].ptr;
  return ptr;
}

// Registers whose values a helper call examines.
LiveRegs helper_arg_uses(const HelperProto *proto) {
  if (!proto)
    return kArgs;
  LiveRegs uses = 0;
  for (int a = 0; a < 5; ++a) {
    ArgKind kind = proto->args[a];
    bool examined = kind != ArgKind::None && kind != ArgKind::Anything &&
                    (kind != ArgKind::Scalar ||
                     (a == 0 && proto->callback == CallbackKind::Loop));
    if (examined)
      uses |= bit(a + 1);
  }
  return uses;
}

} // namespace

Relevance compute_relevance(std::span<const Insn> insns, const Cfg &cfg,
                            const HelperTable &helpers) {
  size_t n = insns.size();
  std::vector<bool> callback(cfg.subprogs.size());
  for (size_t s = 0; s < cfg.subprogs.size(); ++s)
    callback[s] = is_callback_target(insns, cfg, cfg.subprogs[s].start);
  std::vector<LiveRegs> may_ptr =
      may_hold_pointers(insns, cfg, helpers, callback);
  // Whether a caller uses the subprogram's return value (callbacks' is
  // checked to be 0 or 1, so it always matters).
  std::vector<bool> ret_matters(callback);

  Relevance rel;
  rel.regs.assign(n, 0);
  rel.slots.assign(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = n; i-- > 0;) {
      if (cfg.second_half[i])
        continue;
      uint32_t pc = uint32_t(i);
      const Insn &in = insns[pc];
      uint8_t cls = insn_class(in.code);
      uint8_t op = insn_op(in.code);
      LiveRegs out = 0, live_out = 0;
      uint64_t out_slots = 0;
      auto succ = [&](int64_t to) {
        if (to < 0 || size_t(to) >= n)
          return;
        out |= rel.regs[to];
        out_slots |= rel.slots[to];
        live_out |= cfg.live_in[to];
      };
      if (is_jump(in)) {
        succ(jump_target(in, pc));
        if (!is_unconditional_jump(in))
          succ(int64_t(pc) + 1);
      } else if (!is_exit(in)) {
        succ(int64_t(pc) + (is_ld_imm64(in) ? 2 : 1));
      }
      LiveRegs d = bit(in.dst), s = bit(in.src);
      bool reg_src = insn_source(in.code) == BPF_X;
      LiveRegs regs = out;
      uint64_t slots = out_slots;
      switch (cls) {
      case BPF_ALU:
      case BPF_ALU64:
        if (op == BPF_MOV) {
          regs = out & ~d;
          if ((out & d) && reg_src)
            regs |= s;
        } else if (op != BPF_NEG && op != BPF_END) {
          // A sum that may be a pointer matters whenever it is live:
          // pointers are always compared, offsets included.
          bool may_be_pointer =
              cls == BPF_ALU64 && (op == BPF_ADD || op == BPF_SUB) &&
              ((may_ptr[pc] & d) || (reg_src && (may_ptr[pc] & s)));
          bool matters = (out & d) || (may_be_pointer && (live_out & d));
          regs = out & ~d;
          if (matters)
            regs |= d | (reg_src ? s : 0);
        }
        break;
      case BPF_LDX:
        regs = (out & ~d) | s;
        if (in.src == kFramePointer && (out & d))
          slots |= slots_touched(in.off, access_bytes(insn_size(in.code)));
        break;
      case BPF_ST:
        regs = out | d;
        if (in.dst == kFramePointer)
          slots &= ~slot_killed(in.off, access_bytes(insn_size(in.code)));
        break;
      case BPF_STX: {
        int size = access_bytes(insn_size(in.code));
        if (insn_mode(in.code) == BPF_ATOMIC) {
          regs = out;
          if (in.imm == BPF_CMPXCHG)
            regs &= ~bit(0);
          else if (in.imm & BPF_FETCH)
            regs &= ~s;
          regs |= d;
          break;
        }
        regs = out | d;
        if (in.dst == kFramePointer) {
          if (out_slots & slots_touched(in.off, size))
            regs |= s;
          slots &= ~slot_killed(in.off, size);
        }
        break;
      }
      case BPF_LD:
        regs = out & ~d;
        break;
      case BPF_JMP:
      case BPF_JMP32:
        if (op == BPF_EXIT) {
          regs = ret_matters[cfg.subprog_of[pc]] ? bit(0) : 0;
          slots = 0;
        } else if (op == BPF_CALL && in.src == BPF_PSEUDO_CALL) {
          int callee = cfg.subprog_at(uint32_t(int64_t(pc) + 1 + in.imm));
          regs = out & ~kCallerSaved;
          if (callee >= 0) {
            regs |= rel.regs[cfg.subprogs[callee].start] & kArgs;
            if ((out & bit(0)) && !ret_matters[callee]) {
              ret_matters[callee] = true;
              changed = true;
            }
          }
        } else if (op == BPF_CALL) {
          regs = (out & ~kCallerSaved) | helper_arg_uses(helpers.find(in.imm));
        } else if (op != BPF_JA) {
          regs = out | d | (reg_src ? s : 0);
        }
        break;
      }
      regs &= LiveRegs(~bit(kFramePointer));
      LiveRegs merged_regs = rel.regs[pc] | regs;
      uint64_t merged_slots = rel.slots[pc] | slots;
      if (merged_regs != rel.regs[pc] || merged_slots != rel.slots[pc]) {
        rel.regs[pc] = merged_regs;
        rel.slots[pc] = merged_slots;
        changed = true;
      }
    }
  }
  return rel;
}

} // namespace ubtrace::vm::verifier
