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
//            waitpid, pause, flock, fcntl/lockf, mq_receive, splice (a
//            program blocked in I/O, a file lock or a sleep is
//            injectable), called by the program itself or through stdio:
//            the stack is unwound with glibc's CFI (glibc_unwind.h) and
//            every glibc frame between the program and the wrapper must
//            be another such wrapper or a stdio function (fgets, printf,
//            libio's exported _IO_* internals), which change nothing but
//            their FILE meanwhile (whatever lock they hold is that FILE's:
//            pthread_create takes none, and the Interrupted mode's agent
//            constructor must not use that FILE). Any other glibc caller
//            is unsafe, locks or not: a one-thread process runs glibc
//            without its locks, so its first malloc, waiting in getrandom
//            with __malloc_initialized set and the arena not yet set up,
//            would crash the loader's dlopen; system() waiting in waitpid
//            holds its own lock;
//   safe   - the thread is parked in one of glibc's waits for a program's
//            object: blocked in the futex system call (orig_rax is
//            futex), inside pthread_cond_wait/timedwait/clockwait,
//            pthread_join/timedjoin/clockjoin, sem_wait/timedwait/
//            clockwait, pthread_barrier_wait, pthread_mutex_lock/
//            timedlock/clocklock or a pthread_rwlock lock, called straight
//            from code outside glibc. While asleep there such a thread
//            holds no glibc lock: the program's mutex is released (or the
//            one it waits for is the program's), and glibc's internal locks
//            wait elsewhere (__lll_lock_wait reached from glibc's own
//            code). Debian's libc exports no symbol for the internal wait
//            the thread is really in (__futex_abstimed_wait_common,
//            __lll_lock_wait, ...): its stack is unwound with libc's
//            .eh_frame (glibc_unwind.h) out to the function the program
//            called, which must be one of these, and the whole chain must
//            be glibc's own code that the CFI describes; anything else
//            (a frame the CFI cannot follow, a glibc-internal caller such
//            as librt's AIO threads) is unknown, and unknown is unsafe;
//   unsafe - anywhere else in glibc code: the injector lets the thread run
//            and tries again (injector.h).
//
// Known gaps: a callback glibc runs while it holds a lock (a
// dl_iterate_phdr callback; a signal handler running on a stack the scan
// does not reach) is treated as the user code it is.
#pragma once

#include "runtime/inject/glibc_unwind.h"
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

// The rule above, for the threads of one process (its glibc's CFI opened
// once).
class SafePoints {
public:
  explicit SafePoints(const TargetGlibc &glibc)
      : glibc_(glibc), unwinder_(glibc) {}
  SafePoint classify(const user_regs_struct &regs,
                     const RemoteMemory &memory) const;

private:
  const TargetGlibc &glibc_;
  GlibcUnwinder unwinder_;
};

SafePoint classify_stop(const user_regs_struct &regs, const TargetGlibc &glibc,
                        const RemoteMemory &memory);

// Whether an exported libc function `name` holds no glibc lock anywhere in
// its body (the allow-list above).
bool is_lock_free_libc_function(std::string_view name);
// Whether `name` is a stdio function that may call those on a FILE's
// behalf, changing nothing but that FILE meanwhile (fgets, printf, libio's
// exported _IO_* internals).
bool is_stdio_function(std::string_view name);
// Whether `name` is one of the waits above, where a thread parks holding
// no glibc lock when called from outside glibc.
bool is_parked_wait_function(std::string_view name);

} // namespace ubtrace::runtime::inject
