#include "tests/fuzz/vm_program_gen.h"

#include "runtime/vm/asm.h"

#include <algorithm>

namespace ubtrace::vm::fuzz {
namespace {

// Registers a function may use, by role.
struct Frame {
  std::vector<uint8_t> general;  // initialised numbers, free to overwrite
  std::vector<uint8_t> counters; // loop counters, one per nesting level
  int ctx = -1;                  // holds the ctx pointer, or -1
};

class Generator {
public:
  Generator(std::span<const uint8_t> data, const GenOptions &options)
      : data_(data), opt_(options) {
    opt_.ctx_size &= ~7u;
    opt_.stack_bytes = std::clamp<uint32_t>(opt_.stack_bytes & ~7u, 8, 256);
    opt_.max_loop_trips = std::max<uint32_t>(opt_.max_loop_trips, 1);
  }

  std::vector<Insn> run() {
    // main: r6 = ctx, r7/r8 loop counters, the rest numbers.
    Frame main{{0, 1, 2, 3, 4, 5, 9}, {7, 8}, 6};
    emit(VM_MOV64_REG(6, 1));
    prologue(main);
    body(main);
    int call_at = -1;
    if (opt_.calls && pick(2)) {
      call_at = int(out_.size());
      emit(VM_CALL_REL(0)); // patched below
      // The call clobbered r1..r5: give them values again.
      for (uint8_t r = 1; r <= 5; ++r)
        init_reg(main, r);
      body(main);
    }
    epilogue(main);
    if (call_at >= 0) {
      out_[call_at].imm = int32_t(out_.size()) - (call_at + 1);
      // callee: r1..r5 are its arguments, r6/r7 its counters; no ctx.
      Frame callee{{0, 1, 2, 3, 4, 5}, {6, 7}, -1};
      emit(VM_MOV64_REG(0, 1));
      init_stack();
      body(callee);
      epilogue(callee);
    }
    return std::move(out_);
  }

private:
  uint8_t byte() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  uint32_t pick(uint32_t n) {
    if (n <= 1)
      return 0;
    uint32_t v = byte();
    if (n > 256)
      v = v << 8 | byte();
    return v % n;
  }
  int32_t imm32() {
    switch (pick(4)) {
    case 0:
      return int32_t(pick(16)) - 8;
    case 1:
      return int32_t(uint32_t(byte()) << 24 | uint32_t(byte()) << 16 |
                     uint32_t(byte()) << 8 | byte());
    case 2: {
      static const int32_t edges[] = {0,    1,      -1, 0x7fffffff, INT32_MIN,
                                      0xff, 0x8000, 63, 64,         0x7fff};
      return edges[pick(std::size(edges))];
    }
    default:
      return int32_t(byte());
    }
  }
  bool out_of_room() const {
    return out_.size() >= opt_.max_insns || pos_ >= data_.size();
  }
  void emit(Insn insn) { out_.push_back(insn); }
  void emit(Insn lo, Insn hi) { // ld_imm64
    out_.push_back(lo);
    out_.push_back(hi);
  }
  uint8_t reg(const Frame &f) {
    return f.general[pick(uint32_t(f.general.size()))];
  }

  void init_reg(const Frame &f, uint8_t r) {
    switch (pick(f.ctx >= 0 && opt_.ctx_size >= 8 ? 4 : 3)) {
    case 0:
      emit(VM_MOV64_IMM(r, imm32()));
      break;
    case 1:
      emit(VM_MOV32_IMM(r, imm32()));
      break;
    case 2: {
      uint64_t v = uint64_t(uint32_t(imm32())) << 32 | uint32_t(imm32());
      emit(VM_LD_IMM64(r, v));
      break;
    }
    default:
      emit(VM_LDX_MEM(BPF_DW, r, f.ctx, 8 * int(pick(opt_.ctx_size / 8))));
      break;
    }
  }

  void init_stack() {
    for (uint32_t off = 8; off <= opt_.stack_bytes; off += 8)
      emit(VM_ST_MEM(BPF_DW, 10, -int(off), imm32()));
  }

  void prologue(const Frame &f) {
    for (uint8_t r : f.general)
      init_reg(f, r);
    init_stack();
  }

  // Folds the registers and the stack area into r0, so a difference in
  // any of them shows in the result.
  void epilogue(const Frame &f) {
    for (uint8_t r : f.general)
      if (r != 0) {
        emit(VM_ALU64_IMM(BPF_MUL, 0, 0x01000193));
        emit(VM_ALU64_REG(BPF_XOR, 0, r));
      }
    uint8_t tmp = f.general.back();
    for (uint32_t off = 8; off <= opt_.stack_bytes; off += 8) {
      emit(VM_LDX_MEM(BPF_DW, tmp, 10, -int(off)));
      emit(VM_ALU64_IMM(BPF_MUL, 0, 0x01000193));
      emit(VM_ALU64_REG(BPF_XOR, 0, tmp));
    }
    emit(VM_EXIT());
  }

  void body(const Frame &f) {
    uint32_t statements = 4 + pick(24);
    for (uint32_t i = 0; i < statements && !out_of_room(); ++i)
      statement(f, 0);
  }

  void statement(const Frame &f, uint32_t depth) {
    switch (pick(20)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
      return alu(f);
    case 7:
    case 8:
      return stack_store(f);
    case 9:
    case 10:
      return stack_load(f);
    case 11:
      if (f.ctx >= 0 && opt_.ctx_size >= 1)
        return ctx_load(f);
      return alu(f);
    case 12:
      if (opt_.atomics)
        return atomic(f);
      return alu(f);
    case 13:
    case 14:
    case 15:
      return branch(f, depth);
    case 16:
      return jump_over_dead_code(f, depth);
    case 17:
      if (depth < opt_.max_loop_depth && depth < f.counters.size())
        return loop(f, depth);
      return alu(f);
    default:
      return alu(f);
    }
  }

  void alu(const Frame &f) {
    static const uint8_t ops[] = {BPF_ADD, BPF_SUB, BPF_MUL,  BPF_DIV, BPF_OR,
                                  BPF_AND, BPF_LSH, BPF_RSH,  BPF_NEG, BPF_MOD,
                                  BPF_XOR, BPF_MOV, BPF_ARSH, BPF_END};
    uint8_t op = ops[pick(std::size(ops))];
    bool is64 = pick(3) != 0;
    uint8_t cls = is64 ? BPF_ALU64 : BPF_ALU;
    uint8_t dst = reg(f);
    if (op == BPF_NEG)
      return emit(VM_INSN(cls | BPF_NEG, dst, 0, 0, 0));
    if (op == BPF_END) {
      static const int32_t widths[] = {16, 32, 64};
      int32_t bits = widths[pick(3)];
      if (is64 && !opt_.isa_v4)
        cls = BPF_ALU;
      uint8_t source = cls == BPF_ALU && pick(2) ? BPF_X : BPF_K;
      return emit(VM_INSN(cls | BPF_END | source, dst, 0, 0, bits));
    }
    int16_t off = 0;
    if (opt_.isa_v4 && (op == BPF_DIV || op == BPF_MOD) && pick(2))
      off = kOffSigned;
    if (pick(2)) { // register source
      if (opt_.isa_v4 && op == BPF_MOV && pick(3) == 0) {
        static const int16_t widths[] = {8, 16, 32};
        off = widths[pick(is64 ? 3 : 2)];
      }
      return emit(VM_INSN(cls | op | BPF_X, dst, reg(f), off, 0));
    }
    int32_t imm = imm32();
    if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
      imm = int32_t(uint32_t(imm) % (is64 ? 64 : 32));
    if ((op == BPF_DIV || op == BPF_MOD) && imm == 0)
      imm = 3;
    emit(VM_INSN(cls | op | BPF_K, dst, 0, off, imm));
  }

  uint8_t size_field(int &bytes) {
    static const uint8_t sizes[] = {BPF_B, BPF_H, BPF_W, BPF_DW};
    uint8_t s = sizes[pick(4)];
    bytes = access_bytes(s);
    return s;
  }

  // An offset into the stack area where `bytes` bytes fit; aligned to the
  // size half of the time.
  int16_t stack_offset(int bytes) {
    int span = int(opt_.stack_bytes) - bytes + 1;
    int off = -int(opt_.stack_bytes) + int(pick(uint32_t(span)));
    if (pick(2))
      off &= ~(bytes - 1);
    return int16_t(off);
  }

  void stack_store(const Frame &f) {
    int bytes;
    uint8_t size = size_field(bytes);
    int16_t off = stack_offset(bytes);
    if (pick(3) == 0)
      return emit(VM_ST_MEM(size, 10, off, imm32()));
    emit(VM_STX_MEM(size, 10, reg(f), off));
  }

  void stack_load(const Frame &f) {
    int bytes;
    uint8_t size = size_field(bytes);
    int16_t off = stack_offset(bytes);
    if (opt_.isa_v4 && size != BPF_DW && pick(2))
      return emit(VM_LDX_MEMSX(size, reg(f), 10, off));
    emit(VM_LDX_MEM(size, reg(f), 10, off));
  }

  void ctx_load(const Frame &f) {
    int bytes;
    uint8_t size = size_field(bytes);
    if (uint32_t(bytes) > opt_.ctx_size)
      return alu(f);
    int16_t off = int16_t(pick(opt_.ctx_size - bytes + 1));
    emit(VM_LDX_MEM(size, reg(f), f.ctx, off));
  }

  void atomic(const Frame &f) {
    static const int32_t ops[] = {BPF_ADD,
                                  BPF_OR,
                                  BPF_AND,
                                  BPF_XOR,
                                  BPF_ADD | BPF_FETCH,
                                  BPF_OR | BPF_FETCH,
                                  BPF_AND | BPF_FETCH,
                                  BPF_XOR | BPF_FETCH,
                                  BPF_XCHG,
                                  BPF_CMPXCHG};
    bool wide = pick(2);
    int bytes = wide ? 8 : 4;
    int16_t off = int16_t(stack_offset(bytes) & ~(bytes - 1));
    uint8_t src = reg(f);
    int32_t op = ops[pick(std::size(ops))];
    // cmpxchg compares with r0 and writes it: r0 is always a number here.
    emit(VM_ATOMIC(wide ? BPF_DW : BPF_W, op, 10, src, off));
  }

  void condition_jump(const Frame &f, int16_t off) {
    static const uint8_t ops[] = {BPF_JEQ,  BPF_JNE,  BPF_JGT,  BPF_JGE,
                                  BPF_JLT,  BPF_JLE,  BPF_JSGT, BPF_JSGE,
                                  BPF_JSLT, BPF_JSLE, BPF_JSET};
    uint8_t cls = pick(2) ? BPF_JMP : BPF_JMP32;
    uint8_t op = ops[pick(std::size(ops))];
    if (pick(2))
      emit(VM_INSN(cls | op | BPF_X, reg(f), reg(f), off, 0));
    else
      emit(VM_INSN(cls | op | BPF_K, reg(f), 0, off, imm32()));
  }

  // How many verifier paths a branch here may cost.
  uint32_t branch_cost() const {
    uint32_t cost = 1;
    for (uint32_t trips : loop_trips_)
      cost *= trips;
    return cost;
  }

  void branch(const Frame &f, uint32_t depth) {
    uint32_t cost = branch_cost();
    if (doublings_ + cost > opt_.max_path_doublings)
      return alu(f);
    doublings_ += cost;
    size_t at = out_.size();
    condition_jump(f, 0);
    uint32_t n = 1 + pick(4);
    for (uint32_t i = 0; i < n && !out_of_room(); ++i)
      statement(f, depth);
    if (pick(3) == 0) { // an else branch
      size_t skip = out_.size();
      emit(VM_JA(0));
      out_[at].off = int16_t(out_.size() - (at + 1));
      uint32_t m = 1 + pick(3);
      for (uint32_t i = 0; i < m && !out_of_room(); ++i)
        statement(f, depth);
      out_[skip].off = int16_t(out_.size() - (skip + 1));
      return;
    }
    out_[at].off = int16_t(out_.size() - (at + 1));
  }

  // A jump over code nothing reaches: valid instructions the verifier only
  // checks for shape.
  void jump_over_dead_code(const Frame &f, uint32_t depth) {
    size_t at = out_.size();
    bool long_form = opt_.isa_v4 && pick(2);
    emit(long_form ? VM_INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 0) : VM_JA(0));
    uint32_t n = 1 + pick(3);
    for (uint32_t i = 0; i < n; ++i)
      alu(f);
    int32_t skip = int32_t(out_.size() - (at + 1));
    if (long_form)
      out_[at].imm = skip;
    else
      out_[at].off = int16_t(skip);
  }

  // for (c = 0; c < trips; c++) { ... } or counting down to zero.
  void loop(const Frame &f, uint32_t depth) {
    uint8_t c = f.counters[depth];
    uint32_t trips = 1 + pick(opt_.max_loop_trips);
    bool down = pick(2);
    bool narrow = pick(2);
    if (narrow)
      emit(VM_MOV32_IMM(c, down ? int32_t(trips) : 0));
    else
      emit(VM_MOV64_IMM(c, down ? int32_t(trips) : 0));
    size_t header = out_.size();
    loop_trips_.push_back(trips);
    uint32_t n = 1 + pick(6);
    for (uint32_t i = 0; i < n && !out_of_room(); ++i)
      statement(f, depth + 1);
    loop_trips_.pop_back();
    uint8_t alu = narrow ? BPF_ALU : BPF_ALU64;
    uint8_t jmp = narrow ? BPF_JMP32 : BPF_JMP;
    emit(VM_INSN(alu | (down ? BPF_SUB : BPF_ADD) | BPF_K, c, 0, 0, 1));
    int16_t back = int16_t(int64_t(header) - int64_t(out_.size() + 1));
    if (down)
      emit(VM_INSN(jmp | BPF_JNE | BPF_K, c, 0, back, 0));
    else
      emit(VM_INSN(jmp | (pick(2) ? BPF_JLT : BPF_JNE) | BPF_K, c, 0, back,
                   int32_t(trips)));
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  GenOptions opt_;
  std::vector<Insn> out_;
  std::vector<uint32_t> loop_trips_;
  uint32_t doublings_ = 0;
};

} // namespace

std::vector<Insn> generate_program(std::span<const uint8_t> data,
                                   const GenOptions &options) {
  return Generator(data, options).run();
}

} // namespace ubtrace::vm::fuzz
