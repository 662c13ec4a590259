#include "runtime/vm/verifier/cfg.h"

#include "runtime/vm/verifier/relevance.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace ubtrace::vm::verifier {
namespace {

std::string at(uint32_t pc, const std::string &what) {
  return "PC " + std::to_string(pc) + ": " + what;
}

Error fail(uint32_t pc, const std::string &what) {
  return make_error(at(pc, what));
}

std::string hex(uint8_t code) {
  char buf[8];
  snprintf(buf, sizeof(buf), "0x%02x", code);
  return buf;
}

Result<void> check_regs(uint32_t pc, const Insn &in) {
  if (in.dst > 10)
    return fail(pc, "invalid register r" + std::to_string(in.dst));
  if (in.src > 10)
    return fail(pc, "invalid register r" + std::to_string(in.src));
  return {};
}

Result<void> reserved_zero(uint32_t pc, bool ok, const char *field) {
  if (!ok)
    return fail(pc, std::string("reserved field '") + field + "' must be zero");
  return {};
}

Error write_to_fp(uint32_t pc) {
  return fail(pc, "write to r10, the read-only frame pointer");
}

Result<void> check_alu_shape(uint32_t pc, const Insn &in) {
  bool is64 = insn_class(in.code) == BPF_ALU64;
  uint8_t op = insn_op(in.code);
  bool reg_src = insn_source(in.code) == BPF_X;
  if (in.dst == kFramePointer)
    return write_to_fp(pc);
  switch (op) {
  case BPF_ADD:
  case BPF_SUB:
  case BPF_MUL:
  case BPF_OR:
  case BPF_AND:
  case BPF_XOR:
  case BPF_LSH:
  case BPF_RSH:
  case BPF_ARSH:
  case BPF_DIV:
  case BPF_MOD:
  case BPF_MOV:
    break;
  case BPF_NEG:
    if (reg_src || in.src || in.off || in.imm)
      return fail(pc, "malformed neg instruction");
    return {};
  case BPF_END:
    if ((is64 && reg_src) || in.src || in.off)
      return fail(pc, "malformed byte swap instruction");
    if (in.imm != 16 && in.imm != 32 && in.imm != 64)
      return fail(pc, "invalid byte swap width " + std::to_string(in.imm));
    return {};
  default:
    return fail(pc, "unknown opcode " + hex(in.code));
  }
  bool div_like = op == BPF_DIV || op == BPF_MOD;
  bool off_ok = in.off == 0 || (div_like && in.off == kOffSigned) ||
                (op == BPF_MOV && reg_src &&
                 (in.off == 8 || in.off == 16 || (is64 && in.off == 32)));
  if (!off_ok)
    return reserved_zero(pc, false, "off");
  if (reg_src)
    return reserved_zero(pc, in.imm == 0, "imm");
  if (auto r = reserved_zero(pc, in.src == 0, "src_reg"); !r)
    return r;
  if (div_like && in.imm == 0)
    return fail(pc, "division by zero");
  int width = is64 ? 64 : 32;
  if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) &&
      (in.imm < 0 || in.imm >= width))
    return fail(pc, "invalid shift by " + std::to_string(in.imm));
  return {};
}

Result<void> check_jmp_shape(uint32_t pc, const Insn &in) {
  bool is32 = insn_class(in.code) == BPF_JMP32;
  uint8_t op = insn_op(in.code);
  bool reg_src = insn_source(in.code) == BPF_X;
  switch (op) {
  case BPF_JA:
    if (reg_src || in.src || in.dst)
      return fail(pc, "malformed goto");
    return reserved_zero(pc, is32 ? in.off == 0 : in.imm == 0,
                         is32 ? "off" : "imm");
  case BPF_CALL:
    if (is32 || reg_src || in.dst || in.off)
      return fail(pc, "malformed call");
    if (in.src == BPF_PSEUDO_KFUNC_CALL)
      return fail(pc, "kfunc calls are not supported");
    if (in.src != 0 && in.src != BPF_PSEUDO_CALL)
      return fail(pc, "malformed call");
    return {};
  case BPF_EXIT:
    if (is32 || reg_src || in.src || in.dst || in.off || in.imm)
      return fail(pc, "malformed exit");
    return {};
  case BPF_JEQ:
  case BPF_JGT:
  case BPF_JGE:
  case BPF_JSET:
  case BPF_JNE:
  case BPF_JSGT:
  case BPF_JSGE:
  case BPF_JLT:
  case BPF_JLE:
  case BPF_JSLT:
  case BPF_JSLE:
    if (reg_src)
      return reserved_zero(pc, in.imm == 0, "imm");
    return reserved_zero(pc, in.src == 0, "src_reg");
  case kOpJcond:
    return fail(pc, "may_goto is not supported");
  default:
    return fail(pc, "unknown opcode " + hex(in.code));
  }
}

Result<void> check_mem_shape(uint32_t pc, const Insn &in) {
  uint8_t cls = insn_class(in.code);
  uint8_t mode = insn_mode(in.code);
  uint8_t size = insn_size(in.code);
  if (cls == BPF_LDX) {
    if (mode != BPF_MEM && !(mode == kModeMemSx && size != BPF_DW))
      return fail(pc, "unknown opcode " + hex(in.code));
    if (in.dst == kFramePointer)
      return write_to_fp(pc);
    return reserved_zero(pc, in.imm == 0, "imm");
  }
  if (cls == BPF_ST) {
    if (mode != BPF_MEM)
      return fail(pc, "unknown opcode " + hex(in.code));
    return reserved_zero(pc, in.src == 0, "src_reg");
  }
  // BPF_STX
  if (mode == BPF_MEM)
    return reserved_zero(pc, in.imm == 0, "imm");
  if (mode != BPF_ATOMIC)
    return fail(pc, "unknown opcode " + hex(in.code));
  if (size != BPF_W && size != BPF_DW)
    return fail(pc, "atomic operations need a 4- or 8-byte size");
  switch (in.imm) {
  case BPF_ADD:
  case BPF_OR:
  case BPF_AND:
  case BPF_XOR:
    return {};
  case BPF_ADD | BPF_FETCH:
  case BPF_OR | BPF_FETCH:
  case BPF_AND | BPF_FETCH:
  case BPF_XOR | BPF_FETCH:
  case BPF_XCHG:
    if (in.src == kFramePointer)
      return write_to_fp(pc);
    return {};
  case BPF_CMPXCHG:
    return {};
  default:
    return fail(pc, "unknown atomic operation " + std::to_string(in.imm));
  }
}

Result<void> check_ld_shape(uint32_t pc, std::span<const Insn> insns,
                            std::span<const MapDef> maps) {
  const Insn &in = insns[pc];
  uint8_t mode = insn_mode(in.code);
  if (mode == BPF_ABS || mode == BPF_IND)
    return fail(pc, "legacy packet access (BPF_ABS/BPF_IND) is not supported");
  if (!is_ld_imm64(in))
    return fail(pc, "unknown opcode " + hex(in.code));
  if (pc + 1 >= insns.size())
    return fail(pc, "ld_imm64 is missing its second half");
  const Insn &hi = insns[pc + 1];
  if (hi.code || hi.dst || hi.src || hi.off || in.off)
    return fail(pc, "malformed ld_imm64: the second slot must hold only the "
                    "upper 32 bits");
  if (in.dst == kFramePointer)
    return write_to_fp(pc);
  switch (in.src) {
  case 0:
    return {};
  case BPF_PSEUDO_MAP_FD:
  case BPF_PSEUDO_MAP_VALUE: {
    if (in.imm < 0 || size_t(in.imm) >= maps.size())
      return fail(pc, "ld_imm64 refers to map " + std::to_string(in.imm) +
                          ", but there are " + std::to_string(maps.size()) +
                          " maps");
    const MapDef &map = maps[in.imm];
    if (in.src == BPF_PSEUDO_MAP_FD)
      return reserved_zero(pc, hi.imm == 0, "imm of the second slot");
    if (!map.is_global_data && map.type != BPF_MAP_TYPE_ARRAY)
      return fail(pc, "direct value access needs an array map, '" + map.name +
                          "' is not one");
    if (hi.imm < 0 || uint32_t(hi.imm) >= map.value_size)
      return fail(pc, "offset " + std::to_string(hi.imm) +
                          " is outside the value of map '" + map.name + "' (" +
                          std::to_string(map.value_size) + " bytes)");
    return {};
  }
  case BPF_PSEUDO_FUNC:
    return reserved_zero(pc, hi.imm == 0, "imm of the second slot");
  default:
    return fail(pc, "unsupported ld_imm64 source " + std::to_string(in.src));
  }
}

Result<void> check_shape(uint32_t pc, std::span<const Insn> insns,
                         std::span<const MapDef> maps) {
  const Insn &in = insns[pc];
  if (auto r = check_regs(pc, in); !r)
    return r;
  switch (insn_class(in.code)) {
  case BPF_ALU:
  case BPF_ALU64:
    return check_alu_shape(pc, in);
  case BPF_JMP:
  case BPF_JMP32:
    return check_jmp_shape(pc, in);
  case BPF_LDX:
  case BPF_ST:
  case BPF_STX:
    return check_mem_shape(pc, in);
  case BPF_LD:
    return check_ld_shape(pc, insns, maps);
  }
  return fail(pc, "unknown opcode " + hex(in.code));
}

// Registers read (use) and written (def) by one instruction.
void uses_defs(const Insn &in, const HelperTable &helpers, LiveRegs &use,
               LiveRegs &def) {
  use = def = 0;
  auto bit = [](int r) { return LiveRegs(1u << r); };
  uint8_t cls = insn_class(in.code);
  uint8_t op = insn_op(in.code);
  switch (cls) {
  case BPF_ALU:
  case BPF_ALU64:
    if (op != BPF_MOV)
      use |= bit(in.dst);
    if (insn_source(in.code) == BPF_X && op != BPF_END && op != BPF_NEG)
      use |= bit(in.src);
    def |= bit(in.dst);
    return;
  case BPF_LDX:
    use |= bit(in.src);
    def |= bit(in.dst);
    return;
  case BPF_ST:
    use |= bit(in.dst);
    return;
  case BPF_STX:
    use |= bit(in.dst) | bit(in.src);
    if (insn_mode(in.code) == BPF_ATOMIC) {
      if (in.imm == BPF_CMPXCHG) {
        use |= bit(0);
        def |= bit(0);
      } else if (in.imm & BPF_FETCH) {
        def |= bit(in.src);
      }
    }
    return;
  case BPF_LD:
    def |= bit(in.dst);
    return;
  case BPF_JMP:
  case BPF_JMP32:
    if (op == BPF_EXIT) {
      use |= bit(0);
      return;
    }
    if (op == BPF_CALL) {
      int args = 5;
      if (in.src == 0) {
        args = 0;
        if (const HelperProto *proto = helpers.find(in.imm))
          for (int a = 0; a < 5; ++a)
            if (proto->args[a] != ArgKind::None)
              args = a + 1;
      }
      for (int a = 1; a <= args; ++a)
        use |= bit(a);
      for (int r = 0; r <= 5; ++r)
        def |= bit(r);
      return;
    }
    if (op == BPF_JA)
      return;
    use |= bit(in.dst);
    if (insn_source(in.code) == BPF_X)
      use |= bit(in.src);
    return;
  }
}

void compute_liveness(std::span<const Insn> insns, const HelperTable &helpers,
                      Cfg &cfg) {
  size_t n = insns.size();
  std::vector<LiveRegs> use(n), def(n);
  for (size_t pc = 0; pc < n; ++pc)
    if (!cfg.second_half[pc])
      uses_defs(insns[pc], helpers, use[pc], def[pc]);
  cfg.live_in.assign(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = n; i-- > 0;) {
      if (cfg.second_half[i])
        continue;
      const Insn &in = insns[i];
      LiveRegs out = 0;
      auto flow = [&](int64_t to) {
        if (to >= 0 && size_t(to) < n)
          out |= cfg.live_in[to];
      };
      if (is_jump(in)) {
        flow(jump_target(in, int64_t(i)));
        if (!is_unconditional_jump(in))
          flow(int64_t(i) + 1);
      } else if (!is_exit(in)) {
        flow(int64_t(i) + (is_ld_imm64(in) ? 2 : 1));
      }
      LiveRegs live = LiveRegs(use[i] | (out & ~def[i]));
      if (live != cfg.live_in[i]) {
        cfg.live_in[i] = live;
        changed = true;
      }
    }
  }
}

} // namespace

int Cfg::subprog_at(uint32_t pc) const {
  for (size_t i = 0; i < subprogs.size(); ++i)
    if (subprogs[i].start == pc)
      return static_cast<int>(i);
  return -1;
}

Result<Cfg> build_cfg(std::span<const Insn> insns, std::span<const MapDef> maps,
                      const HelperTable &helpers) {
  size_t n = insns.size();
  if (n == 0)
    return make_error("PC 0: the program is empty");
  if (n > (1u << 20))
    return make_error("PC 0: the program has more than 1048576 instructions");
  Cfg cfg;
  cfg.second_half.assign(n, false);
  for (uint32_t pc = 0; pc < n; ++pc) {
    if (auto r = check_shape(pc, insns, maps); !r)
      return std::move(r).take_error();
    if (is_ld_imm64(insns[pc]))
      cfg.second_half[++pc] = true;
  }

  // Subprograms start at 0 and at every call or callback target.
  std::vector<uint32_t> starts{0};
  auto target_ok = [&](uint32_t pc, int64_t to,
                       const char *what) -> Result<void> {
    if (to < 0 || size_t(to) >= n)
      return fail(pc, std::string(what) + " to PC " + std::to_string(to) +
                          " is out of range");
    if (cfg.second_half[to])
      return fail(pc, std::string(what) +
                          " into the middle of the ld_imm64 at PC " +
                          std::to_string(to - 1));
    return {};
  };
  for (uint32_t pc = 0; pc < n; ++pc) {
    const Insn &in = insns[pc];
    if (cfg.second_half[pc])
      continue;
    bool func_ref = is_ld_imm64(in) && in.src == BPF_PSEUDO_FUNC;
    if (!is_pseudo_call(in) && !func_ref)
      continue;
    int64_t to = int64_t(pc) + 1 + in.imm;
    if (auto r = target_ok(pc, to,
                           is_pseudo_call(in) ? "call" : "callback reference");
        !r)
      return std::move(r).take_error();
    starts.push_back(uint32_t(to));
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  cfg.subprog_of.assign(n, 0);
  for (size_t i = 0; i < starts.size(); ++i) {
    uint32_t end = i + 1 < starts.size() ? starts[i + 1] : uint32_t(n);
    cfg.subprogs.push_back({starts[i], end});
    for (uint32_t pc = starts[i]; pc < end; ++pc)
      cfg.subprog_of[pc] = uint32_t(i);
  }

  cfg.prune_point.assign(n, false);
  for (const Cfg::Subprog &sp : cfg.subprogs)
    cfg.prune_point[sp.start] = true;
  for (uint32_t pc = 0; pc < n; ++pc) {
    const Insn &in = insns[pc];
    if (cfg.second_half[pc])
      continue;
    if (is_jump(in)) {
      int64_t to = jump_target(in, pc);
      if (auto r = target_ok(pc, to, "jump"); !r)
        return std::move(r).take_error();
      const Cfg::Subprog &sp = cfg.subprogs[cfg.subprog_of[pc]];
      if (uint32_t(to) < sp.start || uint32_t(to) >= sp.end)
        return fail(pc, "jump to PC " + std::to_string(to) +
                            " leaves its function (PCs " +
                            std::to_string(sp.start) + ".." +
                            std::to_string(sp.end - 1) + ")");
      cfg.prune_point[to] = true;
      if (!is_unconditional_jump(in) && pc + 1 < n)
        cfg.prune_point[pc + 1] = true;
    }
    if (is_call(in) && pc + 1 < n)
      cfg.prune_point[pc + 1] = true;
  }
  // The last slot of every function must end it.
  for (const Cfg::Subprog &sp : cfg.subprogs) {
    uint32_t last = sp.end - 1;
    const Insn &in = insns[last];
    if (!cfg.second_half[last] && (is_exit(in) || is_unconditional_jump(in)))
      continue;
    if (sp.end == n)
      return fail(last, "falls through past the end of the program");
    return fail(last, "falls through into the function at PC " +
                          std::to_string(sp.end));
  }
  compute_liveness(insns, helpers, cfg);
  Relevance relevance = compute_relevance(insns, cfg, helpers);
  cfg.relevant_regs = std::move(relevance.regs);
  cfg.relevant_slots = std::move(relevance.slots);
  return cfg;
}

} // namespace ubtrace::vm::verifier
