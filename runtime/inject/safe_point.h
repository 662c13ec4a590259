// Is a stopped thread at a point where it may run pthread_create (or, in
// the fallback mode, dlopen) for the injector without deadlocking?
//
// The danger is a lock the thread itself holds: stopped inside malloc it
// holds its arena's lock, inside dlopen or dl_iterate_phdr the loader's
// locks, inside pthread_create the stack-cache lock; calling into the same
// code from that thread waits forever for itself. glibc holds these locks
// only while its own code runs (since 2.34 there are no malloc hooks, and
// no user code runs under them), so the rule is:
//
//   safe   - rip is outside glibc (libc, ld.so, libpthread, libdl), and
//            the thread is not in a signal handler that interrupted glibc
//            code (a sigreturn frame whose saved rip is in glibc, found by
//            scanning the stack above rsp for the return address of the
//            signal trampoline);
//   safe   - rip is inside one of a few exported libc functions that hold
//            no lock at any point: blocking system call wrappers such as
//            read, nanosleep/clock_nanosleep, poll, epoll_wait, accept,
//            waitpid, pause (a program blocked in I/O or a sleep is
//            injectable);
//   unsafe - anywhere else in glibc code: the injector lets the thread run
//            and tries again (injector.h).
//
// Known gaps: a callback glibc runs while it holds a lock (a
// dl_iterate_phdr callback; a signal handler running on a stack the scan
// does not reach) is treated as the user code it is; and a thread parked
// in glibc's internal waits (pthread_cond_wait, pthread_join, sem_wait,
// pthread_mutex_lock) is unsafe by this rule, so a process whose threads
// all sit there cannot be injected until one of them wakes.
#pragma once

#include "runtime/inject/remote_memory.h"
#include "runtime/inject/target_glibc.h"

#include <string>
#include <sys/user.h>

namespace ubtrace::runtime::inject {

struct SafePoint {
  bool safe = false;
  std::string
      reason; // "running its own code", "inside glibc (libc.so.6:malloc+0x12)"
};

SafePoint classify_stop(const user_regs_struct &regs, const TargetGlibc &glibc,
                        const RemoteMemory &memory);

// Whether an exported libc function `name` holds no glibc lock anywhere in
// its body (the allow-list above).
bool is_lock_free_libc_function(std::string_view name);

} // namespace ubtrace::runtime::inject
