// Holding a program from its exec until its probes are in: a system-wide
// trace learns of each exec from the kernel's process events within tens
// of microseconds, while the program's dynamic loader is still at work,
// and injecting it while it runs would let the first milliseconds of a
// short program go untraced (bench/RESULTS.md, System-wide).
//
//   auto hold = ExecHold::seize(pid);         // just exec'd
//   hold->run_past_loader(Deadline(200ms));   // its libraries mapped
//   hold->run_to_safe_entry(50ms);            // a call it may be lent at
//   inject_agent(pid, {..., .hold = &*hold}); // lent, and held again
//   ... hooks installed ...
//   hold->release();                          // it runs on
//
// The program's thread (one: a process that has just exec'd has no
// other) is seized (PTRACE_SEIZE) and let run from system call to system
// call (PTRACE_SYSCALL): through its loader, whose calls are made from
// ld.so's code (an exec on the way, as by env or a wrapper, starts the walk
// over in the new image), then on to the first system call entry where
// the injector may borrow it (safe_point.h: a lock-free wrapper such as
// write or nanosleep, called by the program; glibc at that point holds no
// lock). The injector borrows it at that entry (injector.h,
// InjectOptions::hold): the entry becomes the bootstrap stub's, the stub
// issues the program's call again once it is done, and the thread is
// stopped once more at that call's entry, where it stays while the agent
// loads in its own thread and the CLI installs the hooks. Released, the
// thread makes its call and goes on, hooked.
//
// What runs untraced is the program's own code between its loader and
// that first call: constructors, and main up to its first write, read or
// sleep (a program whose first calls are mallocs' brk is borrowed later).
//
// Nothing is left for a missing CLI to undo: the kernel detaches a
// vanished tracer's tracees and clears their system call tracing; a
// signal met on the way is handed on at once (PtraceThread); a held
// thread only waits. A SIGKILL ends a held process as any other. The
// cost to a program held: its start is delayed while it is held (the
// agent's load and the hooks: milliseconds), plus two stops per system
// call of its loader.
#pragma once

#include "runtime/inject/deadline.h"
#include "runtime/inject/ptrace_thread.h"
#include "runtime/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <sys/user.h>
#include <utility>
#include <vector>

namespace ubtrace::runtime::inject {

class ExecHold {
public:
  // Seizes process `pid`'s main thread and stops it.
  static Result<ExecHold> seize(pid_t pid);

  // Runs it through its dynamic loader, to the first system call entry
  // made outside ld.so's code. false: a program without a loader
  // (static), or no such entry before `deadline` (it is stopped where it
  // was then).
  Result<bool> run_past_loader(const Deadline &deadline);
  // Then on, entry after entry, to the first one where the injector may
  // borrow it: true; false once it ran `budget` without one (stopped
  // where it was then; the reason of the last entry refused in
  // why_not()). The budget counts from when its glibc is located, so a
  // slow CLI (a sanitizer build, a loaded machine) does not spend it.
  Result<bool> run_to_safe_entry(std::chrono::milliseconds budget);

  pid_t pid() const { return pid_; }
  bool held() const { return thread_.has_value(); }
  // System call entries it was stopped at.
  int entries() const { return entries_; }
  const std::string &why_not() const { return why_not_; }
  // Where run_to_safe_entry() stopped it, and why that serves.
  const std::string &where() const { return where_; }

  // For the injector (injector.cpp): the stopped thread, and whether it
  // is at a system call's entry. The hold holds nothing until take_back.
  std::optional<PtraceThread> lend(bool *at_entry);
  // The thread, handed over to the bootstrap stub at the entry of a call
  // with registers `entry`: runs it (the stub's own calls pass) to that
  // call's entry again, where it is held. false: it did not get there
  // before `deadline` (it is let go: the hold is over).
  Result<bool> take_back(PtraceThread thread, const user_regs_struct &entry,
                         const Deadline &deadline);

  // Lets it go (the destructor does too): it runs on from where it is.
  void release();

  ~ExecHold() { release(); }
  ExecHold(ExecHold &&) = default;
  ExecHold &operator=(ExecHold &&) = delete;
  ExecHold(const ExecHold &) = delete;

private:
  ExecHold(pid_t pid, PtraceThread thread) : pid_(pid) {
    thread_.emplace(std::move(thread));
  }
  // ld.so's code in the current image; false: the program has none.
  Result<bool> read_loader();
  bool in_loader(uint64_t rip) const;

  pid_t pid_ = 0;
  std::optional<PtraceThread> thread_;
  bool at_entry_ = false;
  int entries_ = 0;
  std::string why_not_, where_;
  std::vector<std::pair<uint64_t, uint64_t>> loader_;
};

} // namespace ubtrace::runtime::inject
