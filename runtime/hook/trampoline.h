// Machine code of the trampolines.
//
// Entry trampoline (one per Jump site), entered by the patched jump with
// the registers and stack of the probed instruction. At a function's entry
// of a site made for a return hook it starts with the lean return entry:
//
//   if the site has no entry hook, the thread has a hook state, is not
//   excluded, runs no dispatch, its shadow stack has room and a return
//   hook is bound: push the shadow entry, leave launch k and the displaced
//   instructions' address below rsp, jmp [rsp-16]   (a few loads and
//   stores in four scratch registers kept in the red zone; the flags are
//   clobbered, which the ABI allows at a function's entry)
//   else fall into the full path:
//
//   lea rsp,[rsp-128]             step over the red zone (lea: flags kept)
//   push ss, rsp*, rflags, cs, rip*, orig_rax=-1, rdi ... r15
//                                 a pt_regs frame (* filled in next)
//   rbx = frame; r12 = bindings.save_vectors_on_entry
//   if r12: align 64, save the vector state that can be live below
//           (at a function's entry, or without XINUSE: see below)
//   cld; align 16; rax = ubt_hook_dispatch_entry(frame, site, r12)
//                  (elsewhere ..._entry_keeping_vectors: the dispatcher
//                  keeps the vector state by moves if r12)
//   if rax: jmp armed
//   if r12: restore it
//   rsp = frame; restore the flags from the frame; pop r15 ... rdi;
//   skip the rest of the frame and the red zone
//   <the displaced instructions, relocated>
//   jmp patch_end
// armed:                          (a return hook armed; rax = stub k)
//   [entry rsp-16] = launch k, [entry rsp-24] = the displaced instructions
//   restore as above; jmp [rsp-16]
//                                 (return_trampoline.h: launch k calls the
//                                 displaced instructions, so the function
//                                 returns to stub k)
//
// Vector state: a handler is compiled code that may call helpers or libc
// (memcpy picks AVX2/AVX-512 variants; their vzeroupper clears the upper
// halves of ymm0-15). A traced function may hold live values in any vector
// register (float arguments in xmm0-7, __m256 arguments in ymm, anything at
// a FUNC+OFFSET probe), so saving only xmm0-15 is not enough. At a
// function's entry the trampoline saves the argument registers (the ABI
// leaves nothing else live); elsewhere the dispatcher keeps every vector
// register, the opmasks and MXCSR by moves (vector_moves.h: XSAVEC + XRSTOR
// cost ~170 ns on some virtual machines), or, on a CPU without XINUSE, the
// trampoline saves all of it with XSAVEC; a handler registered with
// VectorState::NotTouched (built with -mgeneral-regs-only and calling
// nothing that uses vector registers) skips that cost. The dispatcher itself is
// general-registers-only code.
#pragma once

#include "runtime/hook/code_buffer.h"
#include "runtime/hook/cpu_features.h"
#include "runtime/hook/site.h"
#include "runtime/result.h"

namespace ubtrace::runtime::hook {

// Pushes the pt_regs frame, first stepping `red_zone` bytes down and leaving
// kRegsTailRoom bytes for the handler above the registers. Its rsp
// slot gets the traced code's rsp, which is `rsp_above_frame` bytes above
// where rsp was on entry (the return trampoline has pushed a word). The rip
// slot is left to the caller. Leaves rbx = frame (callee-saved: it survives
// the dispatcher call).
void emit_frame_save(CodeBuffer &c, const CpuFeatures &cpu, int32_t red_zone,
                     int32_t rsp_above_frame);
// Pops the frame through ss and the tail room, then moves rsp up by
// `skip_after_frame` more
// (the red zone, or the return trampoline's pushed word). Flags come back
// with SAHF and a trick for OF (cheap), DF explicitly; TF, AC and ID are
// not restored (no compiled code changes them). Without LAHF/SAHF support,
// popfq restores all.
void emit_frame_restore(CodeBuffer &c, const CpuFeatures &cpu,
                        int32_t skip_after_frame);
// What may be live in vector and x87 registers at a probe.
enum class VectorSaveKind : uint8_t {
  All,          // anywhere in a function: XSAVEC everything
  Arguments,    // a function's entry: xmm/ymm/zmm0-7, full width
  ReturnValues, // just after a return: xmm/ymm/zmm0-1 and x87 st0/st1
};
// Aligns rsp to 64, makes room below and saves; restore expects rsp where
// the save left it. ReturnValues uses r13 (saved in the frame).
void emit_vector_save(CodeBuffer &c, const CpuFeatures &cpu,
                      VectorSaveKind kind);
void emit_vector_restore(CodeBuffer &c, const CpuFeatures &cpu,
                         VectorSaveKind kind);

// The Jump site's trampoline; site.plan must be Jump. Records the offset of
// the relocated code in displaced_offset and each instruction's in starts.
Result<void> emit_entry_trampoline(CodeBuffer &c, Site &site,
                                   const CpuFeatures &cpu,
                                   uint32_t &displaced_offset);

// The trampoline of a rewritten `syscall` (site.syscall_entry, hook.h's
// install_syscall_site): the instructions before it relocated, then in its
// place
//
//   lea rsp,[rsp-128]                  step over the red zone
//   movzx ecx, ax; r11 = slow table; movzx ecx, byte [r11+rcx]
//   jrcxz direct; jmp full
// direct:                              a call nobody probes
//   r11 = direct; call r11             (`syscall; ret`, let through)
//   lea rsp,[rsp+128]; jmp done
// full:
//   push a pt_regs frame (rip = the address after the syscall, as the
//   kernel shows it); cld; align 16; call syscall_entry(frame)
//   restore the frame (rax and rcx as the entry left them)
//   lea rsp,[rsp+128]
//   jrcxz done                         rcx = 0: the entry made the call
//   syscall                            otherwise it runs here, as before
//   [mov dword fs:[tls_word_after], 0] with a SyscallPath that asks
// done:
//   <the instructions after it, relocated>; jmp patch_end
//
// rcx and r11 are what the kernel clobbers at a system call, so using them
// costs the program nothing; nothing on the direct path touches the flags
// (the kernel keeps them across a call).
Result<void> emit_syscall_trampoline(CodeBuffer &c, Site &site,
                                     const CpuFeatures &cpu,
                                     uint32_t &displaced_offset);

// The Trap site's out-of-line copy of its instruction, then the jump back.
Result<void> emit_out_of_line(CodeBuffer &c, Site &site);

} // namespace ubtrace::runtime::hook
