// Checks that PtRegs is the kernel's uapi struct pt_regs, offset for offset.
// <asm/ptrace.h> defines macros such as RIP and CS, so it is included here
// only, never from a header.
#include "runtime/hook/pt_regs.h"

#include <asm/ptrace.h>

namespace ubtrace::runtime::hook {

#define UBT_SAME_OFFSET(field)                                                 \
  static_assert(offsetof(PtRegs, field) == offsetof(struct pt_regs, field),    \
                "PtRegs." #field " differs from the kernel's pt_regs")
UBT_SAME_OFFSET(r15);
UBT_SAME_OFFSET(r14);
UBT_SAME_OFFSET(r13);
UBT_SAME_OFFSET(r12);
UBT_SAME_OFFSET(rbp);
UBT_SAME_OFFSET(rbx);
UBT_SAME_OFFSET(r11);
UBT_SAME_OFFSET(r10);
UBT_SAME_OFFSET(r9);
UBT_SAME_OFFSET(r8);
UBT_SAME_OFFSET(rax);
UBT_SAME_OFFSET(rcx);
UBT_SAME_OFFSET(rdx);
UBT_SAME_OFFSET(rsi);
UBT_SAME_OFFSET(rdi);
UBT_SAME_OFFSET(orig_rax);
UBT_SAME_OFFSET(rip);
UBT_SAME_OFFSET(cs);
UBT_SAME_OFFSET(eflags);
UBT_SAME_OFFSET(rsp);
UBT_SAME_OFFSET(ss);
#undef UBT_SAME_OFFSET
static_assert(sizeof(PtRegs) == sizeof(struct pt_regs));

} // namespace ubtrace::runtime::hook
