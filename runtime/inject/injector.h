// Loading the agent into a running process (`ubtrace -p PID`).
//
//   auto listener = AgentListener::create_for(pid);   // channel.h
//   auto report = inject_agent(pid, {.agent_path = so,
//                                    .entry_symbol = agent::kInjectEntry,
//                                    .entry_argument =
//                                        listener->entry_argument()});
//   auto channel = listener->accept(pid, Deadline(10s)); // then the Hello
//
// How (the default, LoaderThread::New):
//  1. Find glibc in the target (target_glibc.h): dlopen, dlsym, dlerror,
//     pthread_create/self/detach, munmap, a `syscall` instruction.
//  2. Borrow a thread that holds no glibc lock (safe_point.h): seize one
//     thread at a time (PTRACE_SEIZE + PTRACE_INTERRUPT; the others keep
//     running), classify where it stopped, and let it go again if it is
//     inside glibc; retry with growing, jittered pauses until
//     safe_point_timeout.
//  3. With that thread (borrowed_thread.h): mmap a scratch region (code
//     page, loader block, guard page, a 256 KiB stack for calls), write the
//     loader thunk and block into it, mprotect the code read+execute, name
//     the region "[anon:ubtrace-inject]", and call
//     pthread_create(thunk, block) on that stack with the return address
//     on an int3 in the region. Nothing of the target's own memory is
//     written, its stack included.
//  4. Put the thread's registers and vector state back and detach. It was
//     held for a few system calls and one pthread_create; if it had been
//     blocked in a system call, the call resumes (see borrowed_thread.h).
//  5. The new thread (loader_thunk.S) blocks asynchronous signals (threads
//     the agent starts inherit that), dlopens the agent (its constructors
//     run there, outside any program thread), calls the optional entry
//     point, publishes the outcome in the block, waits for the injector's
//     ack and unmaps the region on its way out. The injector polls the
//     block until load_timeout; constructors and entry must return by
//     then (the agent's constructor connects, says Hello, starts its own
//     thread and returns).
//
// Why a new thread and not the interrupted one: dlopen runs the agent's
// constructors and entry (maybe slow), takes the loader's locks and
// mallocs; in a thread of its own none of that happens while a program
// thread is frozen, and any lock a program thread holds is released as
// soon as that thread runs again. Why pthread_create and not a raw clone:
// a thread made by clone(2) alone has no TLS of its own; it would share
// the interrupted thread's (errno, malloc's tcache, dlerror state) while
// both run, corrupting them. pthread_create is the only call made on the
// borrowed thread, which is why that thread must be at a safe point.
//
// LoaderThread::Interrupted runs dlopen, dlsym, the entry and dlerror on
// the borrowed thread itself (steps 1-3, then munmap and step 4). It is the
// fallback for a process without pthread_create (glibc < 2.34 without
// libpthread loaded); the same safe-point rule applies, and the entry must
// return before the thread is given back.
//
// Failures end cleanly: a process that exits, is killed or execs at any
// step gives "process PID exited during injection" (or "... called execve
// during injection"), and the image left, if any, is not touched. A call on
// the borrowed thread that does not return within load_timeout is
// abandoned: the thread gets its registers back and runs on, but locks the
// call took stay taken (this is what the safe-point rule prevents).
// Measured here (glibc 2.36): about 2 ms per injection into an idle
// process, most of it reading libc's symbols.
//
// The injector waits for its tracee with waitpid(tid, __WALL): a caller
// must not reap with waitpid(-1) in another thread meanwhile. If the
// target is the caller's own child and exits while held, that wait reaps
// it (the error then says how it ended).
//
// Not handled: CET shadow stacks (refused: the int3 return would fault),
// 32-bit processes, non-glibc C libraries, processes stopped by job
// control (refused: the loader thread would stop with them). No
// uninjection (dlclose).
//
// Units: target_glibc.h (symbols, code ranges), ptrace_thread.h (seize,
// stop, signals), borrowed_thread.h (remote syscalls and calls, exact
// restore), safe_point.h (where a thread may be borrowed), loader_block.h
// and loader_thunk.S (the new thread's code), attach_errors.h (messages).
#pragma once

#include "runtime/result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ubtrace::runtime::inject {

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
};

// Loads `options.agent_path` into process `pid`. Errors say what failed
// and, for attach failures, why (attach_errors.h).
Result<InjectionReport> inject_agent(pid_t pid, const InjectOptions &options);

} // namespace ubtrace::runtime::inject
