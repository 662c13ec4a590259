// ubtrace_hook: x86-64 inline hooks for userspace uprobes and uretprobes,
// run inside the traced process.
//
// Design note
// ===========
// Entry hooks. A 5-byte `jmp rel32` over the instructions at the address
// (after an endbr64, which stays first) enters a per-site trampoline placed
// within +-2 GiB. The trampoline steps over the red zone, saves all general
// registers and the flags as a kernel pt_regs frame (pt_regs.h), saves
// vector state unless the handler promised not to touch it (trampoline.h),
// calls the dispatcher, which calls the handler, restores everything, runs
// the displaced instructions relocated (relocator.h) and jumps back. Where
// a jump cannot go (a function shorter than 5 bytes, a branch into the
// covered bytes, no memory in reach) the site falls back to an int3 whose
// SIGTRAP handler does the same from the signal context (planner.h,
// trap_handler.h): correct, but microseconds per hit instead of
// nanoseconds.
//
// Return hooks. At entry the dispatcher remembers the real return address
// on the thread's shadow stack (thread_state.h) and the trampoline calls the
// function's displaced instructions from launch code, so that it returns to
// a return stub with the return stack buffer in step (return_trampoline.h;
// the int3 path writes the stub over the return address); the stub runs the
// return handler
// with rax = the return value, rip = the real return address, rsp = the
// stack pointer after the return (as a kernel uretprobe sees them), then
// jumps to the real address. A full shadow stack (64 live hooked frames on
// a thread) leaves that call untraced. Recursion works (one entry per
// frame). The stub names its entry, and a return only ever resumes the
// entry it names. longjmp over hooked frames leaves stale entries that the
// next return through an outer frame pops, or that a full stack drops by
// comparing stack pointers. Frames of another stack (makecontext/
// swapcontext coroutines that switch inside hooked frames) stay: a return
// keeps the entries above it whose slot still holds their stub (read
// fault-safely) and leaves a tombstone; a full stack reuses tombstones.
// C++ exceptions and pthread_cancel unwind through replaced return
// addresses thanks to registered unwind info for the stubs (unwind_info.h),
// whose personality routine also pops the entries of the unwound frames.
// Functions that return twice (vfork, setjmp and its kin, getcontext)
// need HookOptions::returns_twice: their entry stays at its index on every
// return (the saved jmp_buf or context names its stub), the same call in a
// loop reuses it, and a return through an outer frame pops it. Not
// supported: a function that returns twice installed without the option
// (its second return aborts the process with a message, where the kernel
// kills it with SIGILL), CET user shadow stacks (install refuses). A
// function that reads its return address sees the stub: the agent refuses
// return hooks on dlsym (RTLD_NEXT); dlopen's (its caller's RUNPATH) stay,
// as with kernel uretprobes.
//
// Patching live code (code_patcher.h). A Jump patch within one aligned
// 16-byte block goes in and out with one atomic store (most function
// entries); others with the int3-first protocol, membarrier(PRIVATE_
// EXPEDITED_SYNC_CORE) between the steps. Threads that were between two
// displaced instructions when a jump went in resume on a trap byte the
// patch leaves at every former instruction start (the trampoline is placed
// so the jump's rel32 has trap bytes there, trap_bytes.h) and the handler
// sends them to the relocated copy. Removing a hook clears its handler,
// restores the original bytes, then waits (membarrier + per-thread
// sequence counters) until no thread can still be calling that handler;
// after uninstall returns, the handler and its user data may be freed.
// Trampolines are never unmapped.
//
// Threads that block SIGTRAP (trap_safety.h). The kernel kills a thread
// that takes a synchronous SIGTRAP or SIGILL it blocks. Int3 sites (Trap
// mode) and non-atomic patches are installed only while no thread blocks
// SIGTRAP (read from /proc just before; refused otherwise, with the
// reason); a non-atomic patch is left in, unbound, rather than removed
// with an int3 while one does; the preload keeps SIGTRAP and SIGILL out of
// every mask the program sets through libc (LD_PRELOAD with -c; with -p
// the agent points the GOT entries of the objects loaded at the attach at
// it, runtime/agent/got_interpose.h), and without it they are refused.
// What remains: a thread that blocks SIGTRAP or SIGILL by a way the
// preload does not see (a raw rt_sigprocmask system call, a pointer to
// pthread_sigmask taken before a -p attach, an object dlopened after it,
// glibc's own internal masks, a signal handler running during
// sigsuspend/ppoll/pselect with such a mask; while system call probes run,
// their dispatch keeps both out of masks set by raw calls too)
//  * dies at an int3 site, or at a non-atomic patch going in, if it blocked
//    after the install checked;
//  * dies if it was between the first instructions of a function (within
//    the 5 bytes a jump covers) at the instant that function's jump went
//    in, and resumes on a trap byte there.
//
// Hot path: no allocation, no lock, no atomic read-modify-write, no libc
// call (runtime/probe_safe.h; tests/faults/hooks/probe_path_calls.py checks
// the object code); a thread's first hit claims its state from a
// preallocated pool (thread_state.h: set up by prepare_hooks). Handlers must be
// async-signal-safe and must not throw. A handler that runs a hooked
// function does not trigger hooks again (counted as nested skips).
//
// One entry handler and one return handler per address; a caller that
// needs more multiplexes in its handler.
//
// install/uninstall take a lock, allocate and make system calls: never from
// a signal handler or a hook handler (uninstall waits for running handlers,
// so one calling it could deadlock against another uninstall). A thread
// stopped inside a handler (SIGSTOP, a debugger) makes uninstall wait for
// it. Trampolines, sites and the
// return stubs stay mapped for the life of the process: the library must
// never be unloaded once a hook was installed.
#pragma once

#include "runtime/hook/planner.h"
#include "runtime/hook/pt_regs.h"
#include "runtime/result.h"

#include <cstdint>
#include <string>

namespace ubtrace::runtime::hook {

enum class HookKind : uint8_t { Entry, Return };

enum class VectorState : uint8_t {
  // Keep the SSE/AVX/AVX-512 registers and MXCSR around the handler: the
  // argument registers at a function's entry, everything elsewhere (by
  // moves where the CPU reports XINUSE, vector_moves.h; else XSAVEC, x87
  // included). Right for any handler that uses no x87 or MMX register
  // (the agent's: habits.agent_no_x87).
  Preserve,
  // The handler never touches vector or x87 registers: built with
  // -mgeneral-regs-only and calling nothing that does (no libc string
  // functions). Saves the XSAVE/XRSTOR pair on every hit.
  NotTouched,
};

struct HookOptions {
  // The function the address belongs to, when known: bounds what may be
  // patched and lets the planner check branches into the patched bytes.
  FunctionBounds function;
  VectorState vectors = VectorState::Preserve;
  // Fall back to the int3 path when a jump cannot be patched; when false,
  // such an install fails with the reason.
  bool allow_trap = true;
  // Return hooks: the function may return again through its saved
  // continuation (vfork, setjmp, getcontext): its shadow entry stays.
  bool returns_twice = false;
  // Return hooks: the handler reads the function's entry arguments
  // (return_entry_args below); the entry keeps its six argument registers.
  bool entry_args = false;
};

struct HookId {
  uint64_t address = 0;
  HookKind kind = HookKind::Entry;
};

struct Patchability {
  PatchMode mode = PatchMode::Jump;
  uint64_t patch_address = 0; // after an endbr64
  uint32_t displaced_bytes = 0;
  std::string trap_reason; // Trap: why no jump
};

// What installing at `address` would do (a Jump may still become a Trap at
// install if no trampoline memory is within reach), or why it cannot.
Result<Patchability> check_patchable(uint64_t address,
                                     FunctionBounds function = {});

// Sets up what the probe path needs before any hook fires, off the probe
// path: the thread-state pool, its thread-exit key (created early, so that
// its index stays below 32 where pthread_setspecific never allocates) and
// fork handler, the trap handlers. Install does it too; the agent calls it
// at its start. Idempotent.
Result<void> prepare_hooks();

// Whether int3 sites and non-atomic patches may go in (trap_safety.h): by
// default when no thread blocks SIGTRAP at install. A caller that knows
// nothing keeps SIGTRAP out of the masks the program sets later (the agent
// without its preload: -p) requires that guard; then they are refused.
void set_trap_guard(bool masks_guarded, bool guard_required);

// Return hooks need the function's entry address (the return address must
// be at rsp).
Result<HookId> install_hook(uint64_t address, HookKind kind, Handler handler,
                            void *user, const HookOptions &options = {});
inline Result<HookId> install_entry_hook(uint64_t address, Handler handler,
                                         void *user,
                                         const HookOptions &options = {}) {
  return install_hook(address, HookKind::Entry, handler, user, options);
}
inline Result<HookId> install_return_hook(uint64_t address, Handler handler,
                                          void *user,
                                          const HookOptions &options = {}) {
  return install_hook(address, HookKind::Return, handler, user, options);
}

// System call sites (runtime/agent/syscalls.h's fast path). The `syscall`
// instruction at `address` (inside `function`, whose bounds must be known
// so that branches into the patched bytes can be ruled out) becomes a jump
// to a trampoline (trampoline.h, emit_syscall_trampoline). There, with the
// registers as the instruction would have found them:
//  * slow[ax] == 0 (a call nobody probes): `call direct`, code that makes
//    the call as `syscall; ret` where the caller's dispatch lets it
//    through. No frame, no flags touched: a few ns.
//  * otherwise entry(regs) (rip = the address after the instruction),
//    which either makes the call itself, storing the result in regs->rax
//    and 0 in regs->rcx, or leaves a nonzero rcx and everything else as it
//    was; the instruction then runs in the trampoline. Other changes to
//    general registers are written back.
// The jump covers what precedes the instruction and the instruction, so
// that threads in the kernel there when it goes in come back past it;
// only where that cannot be, the instruction and what follows it (those
// threads then resume on a trap byte and are sent to the relocated code).
// Fails when only an int3 could go there (the caller keeps its slow path).
// A site removed and rewritten again keeps the trampoline it was made with
// first, whatever `path` says then. Never from a signal handler.
// With tls_word_after (an offset from the thread pointer; 0, where the
// thread's control block is, for none), the 32-bit word there is zeroed
// right after an instruction that ran in the trampoline, in whichever
// task comes back from it: both sides of a clone (runtime/agent/
// clone_sites.h), before either runs anything else.
using SyscallEntry = void (*)(PtRegs *regs);
struct SyscallPath {
  SyscallEntry entry = nullptr;
  const uint8_t *slow = nullptr; // 65536 bytes, indexed by ax
  uint64_t direct = 0;
  int64_t tls_word_after = 0;
};
Result<void> install_syscall_site(uint64_t address, FunctionBounds function,
                                  const SyscallPath &path);
// Restores the instruction (the trampoline stays: threads may be in it).
Result<void> remove_syscall_site(uint64_t address);

// Removes the hook; when it returns, no thread runs or will run its
// handler.
Result<void> uninstall_hook(HookId id);

// The code at `address` is gone (its library was unloaded, maybe loaded
// again in its place): drops every hook there without touching that
// memory, so that a later install at the address starts from the code
// found then. Its handlers are not called any more, but a dispatch that
// began before may still be running one: their user data must outlive
// that (keep it until a later uninstall_hook, which waits for dispatches,
// or forever). Never waits; the site and its bindings are never freed.
Result<void> forget_hook(uint64_t address);

// The mode a hooked address uses, or an error if it is not hooked.
Result<PatchMode> hooked_mode(uint64_t address);

struct HookStats {
  uint32_t sites = 0;      // addresses ever hooked
  uint32_t attached = 0;   // currently patched
  uint32_t trap_sites = 0; // of those ever hooked, on the int3 path
  uint64_t nested_skips = 0;
  uint64_t shadow_overflows = 0;
  uint64_t vector_skips = 0;
  uint64_t unwound_entries = 0; // shadow entries popped by unwinding
  uint64_t refused_claims = 0;  // threads with no state: pool full
  uint64_t kept_at_exit = 0;    // states kept for a frame still returning
  uint64_t reaped = 0;          // states of gone threads taken back
  uint32_t threads_seen = 0;
  uint64_t code_bytes = 0; // trampoline memory mapped
  // Patches written (in or out) in one atomic store, and with the
  // int3-first protocol (code_patcher.h).
  uint64_t atomic_patches = 0;
  uint64_t int3_patches = 0;
  // Uninstalls that left a non-atomic patch in place, unbound, because a
  // thread blocked SIGTRAP (trap_safety.h).
  uint64_t patches_left_in = 0;
  // Traps taken (trap_handler.h): hits of int3-path sites, threads that ran
  // into a Jump site while it was being patched, threads that resumed at a
  // former instruction start inside a patch, traps retried because the
  // patch moved on, and traps that were not ours.
  uint64_t trap_site_hits = 0;
  uint64_t patching_traps = 0;
  uint64_t boundary_traps = 0;
  uint64_t retried_traps = 0;
  uint64_t foreign_traps = 0;
};
HookStats hook_stats();

// The calling thread's count of live return-hooked frames.
uint32_t current_shadow_depth();

// In a return handler of a site that keeps entry arguments
// (HookOptions::entry_args, keep_entry_args): rdi, rsi, rdx, rcx, r8 and r9
// as they were at the entry of the returning call; null elsewhere, and for
// a call that entered before the site began keeping them. The caller may
// have changed what pointer arguments point at: that is the point of
// reading them at the return (output parameters). Async-signal-safe.
const uint64_t *return_entry_args();

// The return hook at `address` keeps entry arguments from now on (for a
// handler bound to an existing hook that now wants them).
Result<void> keep_entry_args(uint64_t address);

// Hooks never fire on the calling thread from now on (for the tracer's own
// threads inside the traced process: their libc calls are not the
// program's). Async-signal-safe; works before any hook is installed.
void exclude_current_thread();

} // namespace ubtrace::runtime::hook
