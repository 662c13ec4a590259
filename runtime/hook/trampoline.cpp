#include "runtime/hook/trampoline.h"

#include "runtime/hook/relocator.h"
#include "runtime/hook/return_stubs.h"
#include "runtime/hook/thread_state.h"

#include <cstddef>
#include <optional>

namespace ubtrace::runtime::hook {

namespace {
// Pushed after the six header slots, in this order: pt_regs reads them
// upward from r15.
constexpr Reg kPushOrder[] = {Reg::Rdi, Reg::Rsi, Reg::Rdx, Reg::Rcx, Reg::Rax,
                              Reg::R8,  Reg::R9,  Reg::R10, Reg::R11, Reg::Rbx,
                              Reg::Rbp, Reg::R12, Reg::R13, Reg::R14, Reg::R15};
constexpr int32_t kHeaderSlots = 6; // ss rsp rflags cs rip orig_rax
} // namespace

void emit_frame_save(CodeBuffer &c, const CpuFeatures &cpu, int32_t red_zone,
                     int32_t rsp_above_frame) {
  // The red zone, then the handler's tail room above the registers.
  x86::lea_rsp(c, -(red_zone + kRegsTailRoom));
  x86::push_imm(c, cpu.user_ss);
  x86::push(c, Reg::Rax); // rsp, filled in below
  x86::pushfq(c);
  x86::push_imm(c, cpu.user_cs);
  x86::push(c, Reg::Rax); // rip, filled in by the caller
  x86::push_imm(c, -1);   // orig_rax: not a system call
  for (Reg r : kPushOrder)
    x86::push(c, r);
  static_assert((kHeaderSlots + 15) * 8 == kPtRegsSize);
  // The traced code's rsp: above the frame, the red zone and whatever the
  // caller says sits between.
  x86::lea_from_rsp(c, Reg::Rax,
                    kPtRegsSize + kRegsTailRoom + red_zone + rsp_above_frame);
  x86::store_rsp(c, pt_regs_offset::kRsp, Reg::Rax);
  x86::mov(c, Reg::Rbx, Reg::Rsp);
}

void emit_frame_restore(CodeBuffer &c, const CpuFeatures &cpu,
                        int32_t skip_after_frame) {
  x86::mov(c, Reg::Rsp, Reg::Rbx);
  if (cpu.lahf_sahf)
    x86::restore_flags_from(c, pt_regs_offset::kEflags); // rax, rcx popped next
  for (int i = 14; i >= 0; --i)
    x86::pop(c, kPushOrder[i]);
  if (cpu.lahf_sahf) {
    // orig_rax, rip, cs, rflags, rsp, ss, the tail room, then the caller's
    x86::lea_rsp(c, 6 * 8 + kRegsTailRoom + skip_after_frame);
    return;
  }
  x86::lea_rsp(c, 3 * 8); // orig_rax, rip, cs
  x86::popfq(c);
  // rsp, ss, the tail room, then the caller's
  x86::lea_rsp(c, 2 * 8 + kRegsTailRoom + skip_after_frame);
}

namespace {

int width_code(const CpuFeatures &cpu) {
  switch (cpu.width) {
  case VectorWidth::Xmm:
    return 0;
  case VectorWidth::Ymm:
    return 1;
  case VectorWidth::Zmm:
    return 2;
  }
  return 0;
}

// Bytes each saved vector register takes (64: one zmm, whatever the width).
constexpr int32_t kVectorSlot = 64;
// Return values: two vector registers, then up to two x87 values.
constexpr int32_t kX87Slots = 2 * kVectorSlot;
constexpr int32_t kReturnAreaSize = kX87Slots + 2 * 16 + 32;

void emit_xsave_all(CodeBuffer &c, const CpuFeatures &cpu) {
  x86::sub_rsp_imm32(c, static_cast<int32_t>(cpu.save_area_size));
  switch (cpu.save_insn) {
  case VectorSaveInsn::Xsavec:
  case VectorSaveInsn::Xsave:
    // The XSAVE header (bytes 512..575) must be zero where the instruction
    // does not write it, or XRSTOR faults.
    x86::xor32(c, Reg::Rax);
    for (int32_t off = 512; off < 576; off += 8)
      x86::store_rsp(c, off, Reg::Rax);
    x86::mov_imm32(c, Reg::Rax, static_cast<uint32_t>(cpu.xsave_mask));
    x86::mov_imm32(c, Reg::Rdx, static_cast<uint32_t>(cpu.xsave_mask >> 32));
    if (cpu.save_insn == VectorSaveInsn::Xsavec)
      x86::xsavec64_rsp(c);
    else
      x86::xsave64_rsp(c);
    return;
  case VectorSaveInsn::Fxsave:
    x86::fxsave64_rsp(c);
    return;
  }
}

void emit_xrstor_all(CodeBuffer &c, const CpuFeatures &cpu) {
  switch (cpu.save_insn) {
  case VectorSaveInsn::Xsavec:
  case VectorSaveInsn::Xsave:
    x86::mov_imm32(c, Reg::Rax, static_cast<uint32_t>(cpu.xsave_mask));
    x86::mov_imm32(c, Reg::Rdx, static_cast<uint32_t>(cpu.xsave_mask >> 32));
    x86::xrstor64_rsp(c);
    return;
  case VectorSaveInsn::Fxsave:
    x86::fxrstor64_rsp(c);
    return;
  }
}

// Pops the x87 values a long double result left (one, or two for a complex
// one) to [rsp+disp] and [rsp+disp+16], their count in r13d. The count comes
// from the stack top (TOP) in the status word: at a return the stack holds
// only the result, so TOP = 8 - count. (FXAM would tell empty registers
// apart too, but takes hundreds of cycles on an empty one.)
void emit_pop_x87_results(CodeBuffer &c, int32_t disp) {
  const uint8_t count[] = {
      0xDF, 0xE0,       // fnstsw ax
      0xC1, 0xE8, 0x0B, // shr eax, 11
      0xF7, 0xD8,       // neg eax
      0x83, 0xE0, 0x07, // and eax, 7: (8 - TOP) mod 8
      0x41, 0x89, 0xC5, // mov r13d, eax
      0x85, 0xC0,       // test eax, eax
  };
  c.bytes(count, sizeof count);
  size_t none = x86::jz_short_forward(c);
  auto fstp = [&](int32_t at) { // fstp tbyte [rsp+at]
    c.u8(0xDB);
    c.u8(0xBC);
    c.u8(0x24);
    c.u32(static_cast<uint32_t>(at));
  };
  fstp(disp);
  const uint8_t two[] = {0x83, 0xF8, 0x02}; // cmp eax, 2
  c.bytes(two, sizeof two);
  c.u8(0x72); // jb: just one
  size_t one = c.size();
  c.u8(0);
  fstp(disp + 16);
  x86::bind_short(c, none);
  x86::bind_short(c, one);
}

// Pushes [rsp+disp] back on the x87 stack if r13d >= count.
void emit_push_x87_if_saved(CodeBuffer &c, int32_t disp, uint8_t count) {
  const uint8_t compare[] = {0x41, 0x83, 0xFD, count}; // cmp r13d, count
  c.bytes(compare, sizeof compare);
  c.u8(0x72); // jb: not saved
  size_t skip = c.size();
  c.u8(0);
  c.u8(0xDB); // fld tbyte [rsp+disp32]
  c.u8(0xAC);
  c.u8(0x24);
  c.u32(static_cast<uint32_t>(disp));
  x86::bind_short(c, skip);
}

} // namespace

// With AVX state saved, vzeroupper lets the handler's legacy-SSE code run
// without the AVX/SSE transition penalty (measured: ~200 ns per hit on a
// movups while the traced code's upper halves were dirty). Every register
// it clears is either saved and restored or caller-saved at the hook.
static void emit_clean_upper(CodeBuffer &c, const CpuFeatures &cpu) {
  if (cpu.width == VectorWidth::Xmm)
    return;
  c.u8(0xC5); // vzeroupper
  c.u8(0xF8);
  c.u8(0x77);
}

void emit_vector_save(CodeBuffer &c, const CpuFeatures &cpu,
                      VectorSaveKind kind) {
  x86::and_rsp_imm8(c, -64);
  int width = width_code(cpu);
  switch (kind) {
  case VectorSaveKind::All:
    emit_xsave_all(c, cpu);
    emit_clean_upper(c, cpu);
    return;
  case VectorSaveKind::Arguments:
    x86::sub_rsp_imm32(c, 8 * kVectorSlot);
    for (int n = 0; n < 8; ++n)
      x86::store_vector(c, width, n, n * kVectorSlot);
    emit_clean_upper(c, cpu);
    return;
  case VectorSaveKind::ReturnValues: {
    x86::sub_rsp_imm32(c, kReturnAreaSize);
    for (int n = 0; n < 2; ++n)
      x86::store_vector(c, width, n, n * kVectorSlot);
    // A long double result sits in st0 (a complex one in st0 and st1):
    // take them off so the handler finds the x87 stack empty, as the ABI
    // promises compiled code.
    emit_pop_x87_results(c, kX87Slots);
    emit_clean_upper(c, cpu);
    return;
  }
  }
}

void emit_vector_restore(CodeBuffer &c, const CpuFeatures &cpu,
                         VectorSaveKind kind) {
  int width = width_code(cpu);
  switch (kind) {
  case VectorSaveKind::All:
    emit_xrstor_all(c, cpu);
    return;
  case VectorSaveKind::Arguments:
    for (int n = 0; n < 8; ++n)
      x86::load_vector(c, width, n, n * kVectorSlot);
    return;
  case VectorSaveKind::ReturnValues:
    emit_push_x87_if_saved(c, kX87Slots + 16, 2); // st1 first
    emit_push_x87_if_saved(c, kX87Slots, 1);
    for (int n = 0; n < 2; ++n)
      x86::load_vector(c, width, n, n * kVectorSlot);
    return;
  }
}

namespace {

// After the dispatcher: restores the vector state (if r12 says it was
// saved) and the registers, leaving rsp where the patched jump found it.
void emit_entry_restore(CodeBuffer &c, const CpuFeatures &cpu,
                        std::optional<VectorSaveKind> kind, int32_t red_zone) {
  if (kind) {
    x86::test64(c, Reg::R12, Reg::R12);
    size_t skip_restore = x86::jz_short_forward(c);
    emit_vector_restore(c, cpu, *kind);
    x86::bind_short(c, skip_restore);
  }
  emit_frame_restore(c, cpu, red_zone);
}

} // namespace

namespace {

// Condition codes of the 0x7x / 0x0F 0x8x jumps.
constexpr uint8_t kCcAe = 0x3, kCcZ = 0x4, kCcNz = 0x5;

// The registers the lean entry uses, kept below the entry rsp (red zone)
// clear of the launch slots.
constexpr Reg kLeanSaved[] = {Reg::Rax, Reg::Rcx, Reg::Rdx, Reg::Rsi};
constexpr int32_t kLeanSaveBelowRsp = 40;

void emit_lean_restore(CodeBuffer &c) {
  for (int i = 0; i < 4; ++i)
    x86::load_from(c, kLeanSaved[i], Reg::Rsp, -(kLeanSaveBelowRsp + 8 * i));
}

struct LeanEntry {
  size_t full = 0;     // rel32 of the jump into the full path
  size_t plain = 0;    // rel32 of the jump to the displaced instructions
  size_t body_imm = 0; // imm64 of the displaced instructions' address
};

// A site with a return hook and no entry hook only has to arm the return:
// this does it without a register frame or a call (dispatch.cpp's
// arm_return in machine code, same protocol), for function entries only,
// where the red zone is free and the flags are dead (the ABI preserves
// neither across a call). Anything unusual takes the full path: no thread
// state yet, an excluded thread, a dispatch already running, a full shadow
// stack, an entry hook bound, a function that returns twice, a return
// handler that reads the entry arguments.
std::optional<LeanEntry> emit_lean_return_entry(CodeBuffer &c, Site &site) {
  int64_t state_at = thread_state_tls_offset();
  int64_t excluded_at = thread_excluded_tls_offset();
  auto fits32 = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  if (!fits32(state_at) || !fits32(excluded_at))
    return std::nullopt;
  LeanEntry lean;
  const uint64_t bindings = reinterpret_cast<uint64_t>(&site.bindings);
  constexpr int32_t kSeq = offsetof(ThreadState, seq);
  constexpr int32_t kDepth = offsetof(ThreadState, depth);
  // Sites with an entry hook (the common case) leave after one register.
  x86::store_rsp(c, -kLeanSaveBelowRsp, Reg::Rax);
  x86::mov_imm64(c, Reg::Rax, bindings);
  x86::cmp_mem_zero(c, Reg::Rax, offsetof(SiteBindings, entry));
  size_t has_entry = x86::jcc_near_forward(c, kCcNz);
  // A function that returns twice reuses or pins entries (dispatch.cpp).
  x86::cmp_mem_zero(c, Reg::Rax, offsetof(SiteBindings, returns_twice));
  size_t twice = x86::jcc_near_forward(c, kCcNz);
  // Entry arguments to keep for the return handler: the full path does it.
  x86::cmp_mem_zero(c, Reg::Rax, offsetof(SiteBindings, entry_args));
  size_t keeps_args = x86::jcc_near_forward(c, kCcNz);
  for (int i = 1; i < 4; ++i)
    x86::store_rsp(c, -(kLeanSaveBelowRsp + 8 * i), kLeanSaved[i]);
  x86::mov(c, Reg::Rcx, Reg::Rax);
  x86::load_fs(c, Reg::Rdx, static_cast<int32_t>(state_at));
  x86::test64(c, Reg::Rdx, Reg::Rdx);
  size_t no_state = x86::jcc_near_forward(c, kCcZ);
  x86::cmp_fs_byte_zero(c, static_cast<int32_t>(excluded_at));
  size_t excluded = x86::jcc_near_forward(c, kCcNz);
  x86::load_from(c, Reg::Rax, Reg::Rdx, kSeq);
  x86::test_low8_imm(c, Reg::Rax, 1);
  size_t nested = x86::jcc_near_forward(c, kCcNz);
  // Enter (seq odd), then read the return binding: uninstall's protocol.
  x86::add_mem_imm8(c, 64, Reg::Rdx, kSeq, 1);
  x86::load_from(c, Reg::Rcx, Reg::Rcx, offsetof(SiteBindings, ret));
  x86::test64(c, Reg::Rcx, Reg::Rcx);
  size_t unbound = x86::jcc_near_forward(c, kCcZ);
  x86::load32_from(c, Reg::Rax, Reg::Rdx, kDepth); // k
  x86::cmp32_imm8(c, Reg::Rax, static_cast<int8_t>(kShadowDepth));
  size_t full_stack = x86::jcc_near_forward(c, kCcAe);
  // [rsp-16] = launch k of the binding's set.
  x86::load_u8_from(c, Reg::Rcx, Reg::Rcx,
                    offsetof(HandlerBinding, save_vectors));
  x86::shl32_imm(c, Reg::Rcx, 11);
  static_assert(kShadowDepth * kStubStride == 1u << 11);
  x86::mov_imm64(c, Reg::Rsi, launch_of(return_stub(0, false)));
  x86::sub64(c, Reg::Rsi, Reg::Rcx);
  x86::mov32(c, Reg::Rcx, Reg::Rax);
  x86::shl32_imm(c, Reg::Rcx, 5);
  static_assert(kStubStride == 1u << 5);
  x86::add64(c, Reg::Rsi, Reg::Rcx);
  x86::store_rsp(c, -kLaunchTargetBelowRsp, Reg::Rsi);
  // shadow[k] = {rsp, [rsp], site}; depth = k + 1.
  x86::lea_indexed(c, Reg::Rax, Reg::Rax, Reg::Rax, 2, 0);
  x86::lea_indexed(c, Reg::Rax, Reg::Rdx, Reg::Rax, 8, kShadowOffset);
  static_assert(sizeof(ShadowEntry) == 24);
  x86::store_to(c, Reg::Rax, offsetof(ShadowEntry, slot), Reg::Rsp);
  x86::load_from(c, Reg::Rsi, Reg::Rsp, 0);
  x86::store_to(c, Reg::Rax, offsetof(ShadowEntry, return_address), Reg::Rsi);
  x86::mov_imm64(c, Reg::Rsi, bindings);
  x86::store_to(c, Reg::Rax, offsetof(ShadowEntry, site), Reg::Rsi);
  x86::add_mem_imm8(c, 32, Reg::Rdx, kDepth, 1);
  // [rsp-24] = the displaced instructions (patched in once placed).
  x86::mov_imm64(c, Reg::Rsi, 0);
  lean.body_imm = c.size() - 8;
  x86::store_rsp(c, -kLaunchBodyBelowRsp, Reg::Rsi);
  x86::add_mem_imm8(c, 64, Reg::Rdx, kSeq, 1); // leave
  emit_lean_restore(c);
  x86::jmp_rsp(c, static_cast<int8_t>(-kLaunchTargetBelowRsp));
  // Nothing bound any more (an uninstall under way): just run the function.
  x86::bind_near(c, unbound);
  x86::add_mem_imm8(c, 64, Reg::Rdx, kSeq, 1);
  emit_lean_restore(c);
  lean.plain = x86::jmp_near_forward(c);
  // The full path, after leaving or before entering.
  x86::bind_near(c, full_stack);
  x86::add_mem_imm8(c, 64, Reg::Rdx, kSeq, 1);
  x86::bind_near(c, no_state);
  x86::bind_near(c, excluded);
  x86::bind_near(c, nested);
  emit_lean_restore(c);
  size_t to_full = x86::jmp_near_forward(c);
  x86::bind_near(c, has_entry);
  x86::bind_near(c, twice);
  x86::bind_near(c, keeps_args);
  x86::load_from(c, Reg::Rax, Reg::Rsp, -kLeanSaveBelowRsp);
  x86::bind_near(c, to_full);
  return lean;
}

} // namespace

Result<void> emit_syscall_trampoline(CodeBuffer &c, Site &site,
                                     const CpuFeatures &cpu,
                                     uint32_t &displaced_offset) {
  constexpr int32_t kRedZone = 128;
  const PatchPlan &plan = site.plan;
  auto is_syscall = [](const DecodedInsn &in) {
    return in.length == 2 && in.bytes[0] == 0x0f && in.bytes[1] == 0x05;
  };
  uint32_t k = plan.insn_count;
  for (uint32_t i = 0; i < plan.insn_count; ++i)
    if (is_syscall(plan.insns[i])) {
      if (k != plan.insn_count || plan.insns[i].address != site.syscall_address)
        return make_error("the bytes a jump covers hold another syscall");
      k = i;
    }
  if (k == plan.insn_count)
    return make_error("the syscall is not among the covered instructions");
  displaced_offset = 0;
  // What precedes the syscall, relocated (no jump back: it goes on here).
  Result<void> r = relocate(c, plan.insns, k, 0, site.starts);
  if (!r)
    return r;
  site.starts[k] = static_cast<uint32_t>(c.size());
  // rcx and r11 are the kernel's to clobber at a system call: scratch.
  x86::lea_rsp(c, -kRedZone);
  const uint8_t lookup[] = {
      0x0f, 0xb7, 0xc8, // movzx ecx, ax
  };
  c.bytes(lookup, sizeof lookup);
  x86::mov_imm64(c, Reg::R11, site.syscall_slow);
  const uint8_t pick[] = {
      0x41, 0x0f, 0xb6, 0x0c, 0x0b, // movzx ecx, byte [r11+rcx]
      0xe3, 0x05,                   // jrcxz direct
  };
  c.bytes(pick, sizeof pick);
  size_t to_full = x86::jmp_near_forward(c);
  // direct: nobody probes this call.
  x86::mov_imm64(c, Reg::R11, site.syscall_direct);
  x86::call(c, Reg::R11);
  x86::lea_rsp(c, kRedZone);
  size_t direct_done = x86::jmp_near_forward(c);
  // full: the entry sees the call.
  x86::bind_near(c, to_full);
  emit_frame_save(c, cpu, 0, kRedZone);
  x86::mov_imm64(c, Reg::Rax, site.syscall_address + 2);
  x86::store_rsp(c, pt_regs_offset::kRip, Reg::Rax);
  x86::cld(c);
  x86::and_rsp_imm8(c, -16);
  x86::mov(c, Reg::Rdi, Reg::Rbx);
  x86::mov_imm64(c, Reg::Rax, site.syscall_entry);
  x86::call(c, Reg::Rax);
  emit_frame_restore(c, cpu, 0);
  x86::lea_rsp(c, kRedZone);
  if (site.syscall_tls_word) {
    // Both tasks a clone makes come back here: each zeroes its word
    // (flags untouched).
    int32_t at = static_cast<int32_t>(site.syscall_tls_word);
    uint8_t tail[] = {0xe3, 0x0e,                   // jrcxz done
                      0x0f, 0x05,                   // syscall
                      0x64, 0xc7, 0x04, 0x25, 0, 0, // mov dword fs:[at], 0
                      0,    0,    0,    0,    0, 0};
    __builtin_memcpy(tail + 8, &at, 4);
    c.bytes(tail, sizeof tail);
  } else {
    const uint8_t tail[] = {0xe3, 0x02,  // jrcxz done
                            0x0f, 0x05}; // syscall
    c.bytes(tail, sizeof tail);
  }
  x86::bind_near(c, direct_done);
  if (k + 1 < plan.insn_count)
    r = relocate(c, plan.insns + k + 1, plan.insn_count - k - 1,
                 plan.patch_end(), site.starts + k + 1);
  else
    x86::jmp(c, plan.patch_end());
  if (!r)
    return r;
  if (!c.ok())
    return make_error("trampoline code buffer overflow");
  return {};
}

Result<void> emit_entry_trampoline(CodeBuffer &c, Site &site,
                                   const CpuFeatures &cpu,
                                   uint32_t &displaced_offset) {
  if (site.syscall_entry)
    return emit_syscall_trampoline(c, site, cpu, displaced_offset);
  constexpr int32_t kRedZone = 128;
  std::optional<LeanEntry> lean;
  if (site.lean_return_entry && site.plan.at_function_entry)
    lean = emit_lean_return_entry(c, site);
  emit_frame_save(c, cpu, kRedZone, 0);
  x86::mov_imm64(c, Reg::Rax, site.plan.address);
  x86::store_rsp(c, pt_regs_offset::kRip, Reg::Rax);
  x86::mov_imm64(
      c, Reg::R12,
      reinterpret_cast<uint64_t>(&site.bindings.save_vectors_on_entry));
  x86::load_from(c, Reg::R12, Reg::R12, 0);
  x86::test64(c, Reg::R12, Reg::R12);
  // At a function's entry only the argument registers can be live (the ABI
  // makes every vector register caller-saved and the x87 stack empty at a
  // call); anywhere else, anything can.
  // Anywhere else the dispatcher keeps it by moves where the CPU reports
  // what is in use (vector_moves.h): XSAVE costs more than the whole hit
  // on some machines. No kind: the trampoline saves nothing.
  std::optional<VectorSaveKind> kind;
  if (site.plan.at_function_entry)
    kind = VectorSaveKind::Arguments;
  else if (!cpu.xinuse)
    kind = VectorSaveKind::All;
  if (kind) {
    size_t skip_save = x86::jz_short_forward(c);
    emit_vector_save(c, cpu, *kind);
    x86::bind_short(c, skip_save);
  }
  x86::cld(c); // the C ABI wants DF clear
  x86::and_rsp_imm8(c, -16);
  x86::mov(c, Reg::Rdi, Reg::Rbx);
  x86::mov_imm64(c, Reg::Rsi, reinterpret_cast<uint64_t>(&site.bindings));
  x86::mov(c, Reg::Rdx, Reg::R12);
  x86::mov_imm64(c, Reg::Rax,
                 kind ? reinterpret_cast<uint64_t>(&ubt_hook_dispatch_entry)
                      : reinterpret_cast<uint64_t>(
                            &ubt_hook_dispatch_entry_keeping_vectors));
  x86::call(c, Reg::Rax);
  // rax: the return stub when a return hook armed (return_trampoline.h).
  x86::test64(c, Reg::Rax, Reg::Rax);
  size_t to_armed = x86::jcc_near_forward(c, kCcNz);
  emit_entry_restore(c, cpu, kind, kRedZone);
  if (!c.ok())
    return make_error("trampoline code buffer overflow");

  displaced_offset = static_cast<uint32_t>(c.size());
  const PatchPlan &plan = site.plan;
  Result<void> r =
      relocate(c, plan.insns, plan.insn_count, plan.patch_end(), site.starts);
  if (!r)
    return r;
  for (uint32_t i = 0; i < plan.insn_count; ++i)
    site.starts[i] -= displaced_offset;
  if (lean) {
    const uint64_t body = c.base() + displaced_offset;
    c.patch_u32(lean->body_imm, static_cast<uint32_t>(body));
    c.patch_u32(lean->body_imm + 4, static_cast<uint32_t>(body >> 32));
    c.patch_u32(lean->plain,
                static_cast<uint32_t>(displaced_offset - (lean->plain + 4)));
  }

  // Armed: leave the launch code and the displaced instructions' address
  // in the function's red zone (free at its entry, where return hooks
  // are), restore, and jump to the launch code, which calls the displaced
  // instructions with stub k as their return address.
  x86::bind_near(c, to_armed);
  constexpr int32_t kEntryRsp = kPtRegsSize + kRegsTailRoom + kRedZone;
  x86::lea_from(c, Reg::Rdx, Reg::Rax, -static_cast<int32_t>(kLaunchBytes));
  x86::store_to(c, Reg::Rbx, kEntryRsp - kLaunchTargetBelowRsp, Reg::Rdx);
  x86::mov_imm64(c, Reg::Rcx, c.base() + displaced_offset);
  x86::store_to(c, Reg::Rbx, kEntryRsp - kLaunchBodyBelowRsp, Reg::Rcx);
  emit_entry_restore(c, cpu, kind, kRedZone);
  x86::jmp_rsp(c, static_cast<int8_t>(-kLaunchTargetBelowRsp));
  if (!c.ok())
    return make_error("trampoline code buffer overflow");
  return {};
}

Result<void> emit_out_of_line(CodeBuffer &c, Site &site) {
  const PatchPlan &plan = site.plan;
  return relocate(c, plan.insns, plan.insn_count, plan.patch_end(),
                  site.starts);
}

} // namespace ubtrace::runtime::hook
