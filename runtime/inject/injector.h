// Loading the agent into a running process (`ubtrace -p PID`).
//
//   auto listener = AgentListener::create_for(pid);   // channel.h
//   auto report = inject_agent(pid, {.agent_path = so,
//                                    .entry_symbol = agent::kInjectEntry,
//                                    .entry_argument =
//                                        listener->entry_argument()});
//   auto channel = listener->accept(pid, Deadline(10s)); // then the Hello
//
// The rule: the injector may vanish (SIGKILL, a crash, an OOM kill) at any
// instant, and the target must go on correct. So the target's state
// changes at one commit point only, and after it the target finishes
// everything by itself and puts the borrowed thread back exactly, tracer
// or not. No int3, no single-step, no remote call that returns to a trap,
// no PTRACE_O_EXITKILL, no signal kept back by the tracer.
//
// How (the default, LoaderThread::New):
//  1. Find glibc in the target (target_glibc.h): dlopen, dlsym, dlerror,
//     pthread_create/self/detach, munmap, __errno_location.
//  2. Write the bootstrap code (bootstrap.S) into a code cave: the unused
//     tail of the last page of an executable segment (code_cave.h), e.g.
//     libc's. Nobody runs those bytes; nothing is mapped executable.
//  3. Choose a thread (thread_choice.h): seize one at a time (PTRACE_SEIZE
//     + PTRACE_INTERRUPT; the others run on), keep it if it holds no glibc
//     lock (safe_point.h: running its own code, blocked in a lock-free
//     system call wrapper, or parked in one of glibc's waits for the
//     program's objects, pthread_cond_wait, pthread_join, sem_wait,
//     pthread_mutex_lock..., found by unwinding it with libc's CFI), is
//     not in a restartable sequence, and its own stack has room for the
//     bootstrap frame below its red zone (thread_stack.h); else let it go
//     and try the next, with growing, jittered pauses, until
//     safe_point_timeout. An idle thread pool is thus injectable.
//  4. Write the bootstrap frame (bootstrap_frame.h) on that thread's stack
//     below its red zone: the stub's job (the region to map, at an address
//     chosen in a free gap, region_placement.h; the loader block to copy
//     there, loader_block.h), its XSAVE image and the restore record.
//  5. The commit: one PTRACE_SETREGS pointing the thread at the stub
//     (borrowed_thread.h), then the detach. A thread stopped in a call that
//     is to restart is first let re-enter it (PTRACE_SYSCALL) and the
//     commit turns that entry into the stub's rt_sigprocmask, so that every
//     signal is blocked before the thread is back in user space.
//  6. The stub, on its own: blocks signals, maps the region, copies the
//     block, pthread_create(loader thread) on a stack of the region, then
//     restores the vector state, decides like the kernel whether the
//     interrupted call restarts or fails with EINTR (a signal that came
//     meanwhile), restores the mask and every register in one `ret`.
//  7. The loader thread: blocks asynchronous signals (threads the agent
//     starts inherit that), dlopens the agent (its constructors run there,
//     outside any program thread), calls the optional entry point,
//     publishes the outcome in the block, waits for the injector's ack
//     (not at all once the injector is gone), and unmaps the region.
//     The injector polls the block through /proc/PID/mem until
//     load_timeout, acks, and never stops a thread again.
//
// What a SIGKILL of the injector leaves, by where it lands
// (inject_steps.h names the steps; the fault suite kills it at each):
//   before or at Chosen: the thread, if seized, is let go by the kernel
//       with its own registers; a call it was in restarts as after any
//       stop (the kernel's own restart). Nothing else is changed, beyond
//       the bytes of a code cave once CaveWritten.
//   CaveWritten, FrameWritten: as above, plus dead bytes: the cave's code
//       (in the process's private copy of that page, reused by later
//       injections) and the frame below the thread's red zone, which the
//       thread overwrites when it next needs that stack.
//   Committed (registers written, not yet detached) and later: the stub
//       runs to its end; the thread comes back exactly as it was stopped.
//       The loader thread still loads the agent (and calls its entry);
//       finding the injector gone it does not wait for an ack, unmaps the
//       region and ends. Left behind: the agent library, loaded; it must
//       find no CLI and go quiet (the real agent's entry cannot connect).
//   Acked: the injection is complete; what happens next is the CLI's.
// If the process forks meanwhile, the child gets no copy of the region
// (MADV_DONTFORK) and none of the borrowed thread's state. A process that
// execs meanwhile loses the region with its image; the injector says so.
//
// Why a new thread and not the interrupted one: dlopen runs the agent's
// constructors and entry (maybe slow), takes the loader's locks and
// mallocs; in a thread of its own none of that happens while a program
// thread is held, and any lock a program thread holds is released as
// soon as that thread runs again. Why pthread_create and not a raw clone:
// a thread made by clone(2) alone has no TLS of its own; it would share
// the interrupted thread's (errno, malloc's tcache, dlerror state) while
// both run, corrupting them. pthread_create is the only call made on the
// borrowed thread, which is why that thread must be at a safe point.
//
// LoaderThread::Interrupted runs dlopen, dlsym, the entry and dlerror on
// the borrowed thread itself, inside the stub (on the region's stack),
// then waits (at most 5 s, not at all once the injector is gone) for the
// ack and unmaps the region before it restores the thread. It is the
// fallback for a process without pthread_create (glibc < 2.34 without
// libpthread); the same safe-point rule applies, the entry must return
// before the thread is given back, and a thread in a call that resumes
// through restart_syscall (a relative sleep, a timed futex wait) is not
// borrowed: the agent's code could rewrite that call's restart block.
//
// Signals: one that arrives while a thread is being stopped is handed on
// at once (ptrace_thread.h). One that arrives after the commit and before
// the stub restored the mask stays pending; the stub then makes the
// interrupted call end as the kernel would have for a thread that was
// merely stopped: -EINTR if the first pending signal the restored mask
// lets through has a handler and the call's restart code says so
// (ERESTARTNOHAND, ERESTART_RESTARTBLOCK; ERESTARTSYS without
// SA_RESTART), else the restart, after which the signal is delivered.
// Remaining differences: a signal delivered between the stub's pending
// check and its unmask (a few instructions) runs its handler before the
// restart, as the kernel's own restart path also allows; and for a thread
// stopped outside a system call's restart, a signal delivered before the
// stub's first instruction, or after the unmask, runs its handler with
// the stub's registers as the interrupted context (a handler that looks at
// or edits its ucontext sees injector code, not the program's).
//
// A process in another mount namespace or root (a container) may not see
// the agent's file: agent_placement.h finds it a name, or a copy.
//
// A program held from its exec (exec_hold.h, InjectOptions::hold) is not
// chosen among its threads: its held thread is borrowed at the entry of
// the system call it was stopped at (the commit turns that entry into the
// stub's, the stub issues the call again once done), and after the commit
// it is not detached but run to that call's entry again and held there,
// for its holder to let go once the hooks are in. A dead injector leaves
// it running: the kernel detaches it.
//
// Failures end cleanly: a process that exits, is killed or execs at any
// step gives "process PID exited during injection" (or "... called execve
// during injection", or "... lost the injector's memory during
// injection"); the image left, if any, is not touched. A load that does
// not finish within load_timeout is reported and left to finish (or not)
// in its own thread.
//
// Measured here (glibc 2.36, 2 shared cores): a whole run of the bare
// injector (tests/faults/inject/inject_tool, its own start included)
// takes about 9 ms at best, half of it until a thread is chosen; from the
// commit to the load's outcome in the block about 0.3 ms (the test agent
// already loaded: dlopen has little to do); the previous, tracer-driven
// injector took as long, within the noise.
//
// The injector waits for its tracee with waitpid(tid, __WALL): a caller
// must not reap with waitpid(-1) in another thread meanwhile. If the
// target is the caller's own child and exits while held, that wait reaps
// it (the error then says how it ended).
//
// Not handled: CET shadow stacks (refused: the stub's `ret` would fault),
// 32-bit processes, non-glibc C libraries, processes stopped by job
// control (refused: the loader thread would stop with them), a seccomp
// filter that kills on one of the stub's system calls (rt_sigprocmask,
// rt_sigpending, rt_sigaction, mmap, mprotect, madvise, prctl, munmap,
// futex, kill, and pthread_create's own: all in systemd's
// @system-service). No uninjection (dlclose).
//
// Units: target_glibc.h (symbols, code ranges), ptrace_thread.h (seize,
// stop, signals), thread_choice.h, safe_point.h (with glibc_unwind.h and
// call_site.h), rseq_check.h and thread_stack.h (which thread), code_cave.h,
// region_placement.h, bootstrap_frame.h, bootstrap_layout.h, loader_block.h and
// bootstrap.S (the code and data of the target's side), borrowed_thread.h (the
// commit), inject_steps.h (the test hook), attach_errors.h (messages).
#pragma once

#include "runtime/result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ubtrace::runtime::inject {

class ExecHold;

enum class LoaderThread : uint8_t {
  Auto,        // New when pthread_create is there, else Interrupted
  New,         // a new thread of the target loads the agent
  Interrupted, // the borrowed thread loads it
};

struct InjectOptions {
  std::string agent_path;
  // An agent that wants its channel as an argument exports
  // `int NAME(const char *)`: set entry_symbol, and it is called after
  // dlopen with entry_argument; its return value is reported. "" = no
  // entry. The ubtrace agent's is agent::kInjectEntry, with the listener's
  // entry_argument() (channel.h): where to connect and whom to expect.
  std::string entry_symbol;
  std::string entry_argument;
  LoaderThread loader = LoaderThread::Auto;
  // false: borrow the first thread that stops, wherever it is (for
  // experiments; this can deadlock the target).
  bool require_safe_point = true;
  // Borrow only this thread of the process (0: any).
  pid_t only_thread = 0;
  // A process held from its exec (exec_hold.h): its held thread is the
  // one borrowed, and once the stub is done it is held again at the entry
  // of the call it was lent at (not when it was lent elsewhere).
  ExecHold *hold = nullptr;
  // For a thread at a safe point (and for a process that has only just
  // started to map libc).
  std::chrono::milliseconds safe_point_timeout{5000};
  // For dlopen + entry to finish.
  std::chrono::milliseconds load_timeout{30000};
};

struct InjectionReport {
  uint64_t handle = 0; // dlopen's handle in the target
  bool entry_called = false;
  int entry_result = 0;                    // the entry's return value
  LoaderThread loader = LoaderThread::New; // New or Interrupted
  pid_t borrowed_tid = 0;                  // the thread that was stopped
  pid_t loader_tid = 0;                    // the thread that ran dlopen
  std::string safe_point; // where the borrowed thread was, and why it was safe
  int stops = 0;          // threads stopped and looked at before one was safe
  uint64_t region = 0;    // the scratch region (gone when the load is done)
  uint64_t region_size = 0;
  // How the process found the agent (agent_placement.h): "the same path",
  // "copied into /tmp/...", ...
  std::string agent_placement;
};

// Loads `options.agent_path` into process `pid`. Errors say what failed
// and, for attach failures, why (attach_errors.h).
Result<InjectionReport> inject_agent(pid_t pid, const InjectOptions &options);

} // namespace ubtrace::runtime::inject
