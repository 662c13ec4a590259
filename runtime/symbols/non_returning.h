// Entries a return probe must never hook. A return probe swaps the return
// address at the top of the stack on entry for its trampoline; where the
// top of the stack holds something else, that write corrupts the program:
//
//   - the ELF entry point (_start): the stack holds argc, and the program
//     then starts with a wrong argc (redis-server crashed in its start-up);
//   - trampolines entered by a jump: the signal return __restore_rt (the
//     top of the stack is the signal frame), the lazy binder
//     _dl_runtime_resolve* (it holds the relocation index), makecontext's
//     __start_context;
//   - functions that never return (exit, abort, longjmp, __cxa_throw,
//     __stack_chk_fail, ...): the probe can never fire, and the hooked
//     frame is left armed for good.
//
// (vfork, which returns in the child through the parent's stack, and
// setjmp, which returns twice, are the return hooks' to handle.)
//
// ELF does not mark noreturn functions; the list names the well-known ones
// of glibc, the C++ runtime and the unwinder.
#pragma once

#include <string_view>

namespace ubtrace::runtime::symbols {

// Why a return probe on the function named `name` (as stored: a version
// suffix such as "exit@@GLIBC_2.2.5" is ignored) is refused, or empty.
std::string_view non_returning_reason(std::string_view name);

// The reason for the ELF entry point, whatever its name.
inline constexpr std::string_view kEntryPointReason =
    "is the ELF entry point: it is entered without a return address (the "
    "top of the stack holds argc)";

} // namespace ubtrace::runtime::symbols
