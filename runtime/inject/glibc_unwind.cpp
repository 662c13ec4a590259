#include "runtime/inject/glibc_unwind.h"

#include "runtime/inject/hex.h"

#include <array>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <optional>

namespace ubtrace::runtime::inject {
namespace {

// DWARF register numbers on x86-64: rax rdx rcx rbx rsi rdi rbp rsp,
// r8..r15, then the return address column.
constexpr int kRsp = 7;
constexpr int kReturnAddress = 16;
constexpr int kRegisters = 17;

struct Registers {
  std::array<uint64_t, kRegisters> value{};
  std::array<bool, kRegisters> known{};

  void set(int reg, uint64_t v) {
    value[static_cast<size_t>(reg)] = v;
    known[static_cast<size_t>(reg)] = true;
  }
  std::optional<uint64_t> get(int reg) const {
    if (reg < 0 || reg >= kRegisters || !known[static_cast<size_t>(reg)])
      return std::nullopt;
    return value[static_cast<size_t>(reg)];
  }
};

Registers from(const user_regs_struct &regs) {
  Registers r;
  const unsigned long long values[kRegisters] = {
      regs.rax, regs.rdx, regs.rcx, regs.rbx, regs.rsi, regs.rdi,
      regs.rbp, regs.rsp, regs.r8,  regs.r9,  regs.r10, regs.r11,
      regs.r12, regs.r13, regs.r14, regs.r15, regs.rip};
  for (int i = 0; i < kRegisters; ++i)
    r.set(i, values[i]);
  return r;
}

// The result of a DWARF expression: a value, or the address holding it.
struct Evaluated {
  uint64_t value = 0;
  bool is_address = true;
};

// Evaluates the operations CFI uses for the CFA and saved registers:
// breg/reg, the CFA, constants, plus/minus, deref, stack_value.
std::optional<Evaluated> evaluate(const Dwarf_Op *ops, size_t count,
                                  const Registers &regs,
                                  std::optional<uint64_t> cfa,
                                  const RemoteMemory &memory) {
  std::vector<uint64_t> stack;
  Evaluated out;
  for (size_t i = 0; i < count; ++i) {
    const Dwarf_Op &op = ops[i];
    uint8_t atom = op.atom;
    if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      auto reg = regs.get(atom - DW_OP_breg0);
      if (!reg)
        return std::nullopt;
      stack.push_back(*reg + op.number);
    } else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
      auto reg = regs.get(atom - DW_OP_reg0);
      if (!reg || count != 1)
        return std::nullopt;
      return Evaluated{*reg, false};
    } else if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      stack.push_back(atom - DW_OP_lit0);
    } else {
      switch (atom) {
      case DW_OP_bregx: {
        auto reg = regs.get(static_cast<int>(op.number));
        if (!reg)
          return std::nullopt;
        stack.push_back(*reg + op.number2);
        break;
      }
      case DW_OP_regx: {
        auto reg = regs.get(static_cast<int>(op.number));
        if (!reg || count != 1)
          return std::nullopt;
        return Evaluated{*reg, false};
      }
      case DW_OP_call_frame_cfa:
        if (!cfa)
          return std::nullopt;
        stack.push_back(*cfa);
        break;
      case DW_OP_const1u:
      case DW_OP_const1s:
      case DW_OP_const2u:
      case DW_OP_const2s:
      case DW_OP_const4u:
      case DW_OP_const4s:
      case DW_OP_const8u:
      case DW_OP_const8s:
      case DW_OP_constu:
      case DW_OP_consts:
        stack.push_back(op.number);
        break;
      case DW_OP_plus_uconst:
        if (stack.empty())
          return std::nullopt;
        stack.back() += op.number;
        break;
      case DW_OP_plus:
      case DW_OP_minus: {
        if (stack.size() < 2)
          return std::nullopt;
        uint64_t b = stack.back();
        stack.pop_back();
        stack.back() = atom == DW_OP_plus ? stack.back() + b : stack.back() - b;
        break;
      }
      case DW_OP_deref: {
        if (stack.empty())
          return std::nullopt;
        auto word = memory.read_value<uint64_t>(stack.back());
        if (!word)
          return std::nullopt;
        stack.back() = *word;
        break;
      }
      case DW_OP_stack_value:
        out.is_address = false;
        break;
      default:
        return std::nullopt;
      }
    }
  }
  if (stack.size() != 1)
    return std::nullopt;
  out.value = stack.back();
  return out;
}

} // namespace

struct GlibcUnwinder::Object {
  Elf *elf = nullptr;
  Dwarf_CFI *cfi = nullptr;
  ~Object() {
    if (cfi)
      dwarf_cfi_end(cfi);
    if (elf)
      elf_end(elf);
  }
};

GlibcUnwinder::GlibcUnwinder(const TargetGlibc &glibc) : glibc_(glibc) {
  elf_version(EV_CURRENT);
  for (const GlibcObject &object : glibc.objects()) {
    auto state = std::make_unique<Object>();
    if (object.file && object.file->valid()) {
      state->elf = elf_begin(object.file->get(), ELF_C_READ_MMAP, nullptr);
      if (state->elf)
        state->cfi = dwarf_getcfi_elf(state->elf);
    }
    objects_.push_back(std::move(state));
  }
}

GlibcUnwinder::~GlibcUnwinder() = default;

Result<GlibcCallChain> GlibcUnwinder::unwind(const user_regs_struct &start,
                                             const RemoteMemory &memory) const {
  GlibcCallChain chain;
  Registers regs = from(start);
  for (int depth = 0; depth <= kMaxGlibcFrames; ++depth) {
    uint64_t pc = *regs.get(kReturnAddress);
    size_t index = glibc_.objects().size();
    for (size_t i = 0; i < glibc_.objects().size(); ++i)
      for (auto [lo, hi] : glibc_.objects()[i].text)
        if (pc >= lo && pc < hi)
          index = i;
    if (index == glibc_.objects().size()) {
      if (depth == 0)
        return make_error("not in glibc");
      chain.caller = pc;
      return chain;
    }
    if (depth == kMaxGlibcFrames)
      break;
    chain.pcs.push_back(pc);
    const GlibcObject &object = glibc_.objects()[index];
    Dwarf_CFI *cfi = objects_[index]->cfi;
    if (!cfi)
      return make_error("no CFI for " + object.path);
    // A return address points after its call: look the call up.
    Dwarf_Addr lookup = pc - object.bias - (depth ? 1 : 0);
    Dwarf_Frame *frame = nullptr;
    if (dwarf_cfi_addrframe(cfi, lookup, &frame) != 0 || !frame)
      return make_error("no CFI at " + glibc_.describe(pc));
    std::unique_ptr<Dwarf_Frame, void (*)(void *)> owned(frame, free);
    Dwarf_Op *ops = nullptr;
    size_t count = 0;
    if (dwarf_frame_cfa(frame, &ops, &count) != 0 || count == 0)
      return make_error("no CFA rule at " + glibc_.describe(pc));
    auto cfa = evaluate(ops, count, regs, std::nullopt, memory);
    if (!cfa || !cfa->is_address)
      return make_error("a CFA rule not understood at " + glibc_.describe(pc));
    Registers caller;
    for (int reg = 0; reg < kRegisters; ++reg) {
      if (reg == kRsp)
        continue;
      Dwarf_Op mem[3];
      Dwarf_Op *rule = nullptr;
      size_t n = 0;
      if (dwarf_frame_register(frame, reg, mem, &rule, &n) != 0)
        continue; // unknown: stays so in the caller
      if (n == 0) {
        if (rule == nullptr) // same value
          if (auto value = regs.get(reg))
            caller.set(reg, *value);
        continue; // else undefined
      }
      auto where = evaluate(rule, n, regs, cfa->value, memory);
      if (!where)
        continue;
      if (!where->is_address) {
        caller.set(reg, where->value);
        continue;
      }
      if (auto saved = memory.read_value<uint64_t>(where->value))
        caller.set(reg, *saved);
    }
    caller.set(kRsp, cfa->value);
    if (!caller.get(kReturnAddress))
      return make_error("the stack ends inside glibc at " +
                        glibc_.describe(pc));
    regs = caller;
  }
  return make_error("more than " + std::to_string(kMaxGlibcFrames) +
                    " glibc frames");
}

} // namespace ubtrace::runtime::inject
