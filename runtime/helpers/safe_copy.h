// Fault-safe copies out of this process's own memory, without a system
// call the program may forbid.
//
// A seccomp filter that kills or fails process_vm_readv (systemd's
// SystemCallFilter=@system-service does) once killed a sandboxed program at
// the first str(), or silently emptied every string. Reads now run a small
// copy routine (rep movsb over one page at a time) whose faults the SIGSEGV
// and SIGBUS handlers of arm_safe_copy() recognise by the faulting
// instruction (kernel-raised, at that routine's one instruction) and resume
// at a fixup that reports failure. Every other fault goes to the program's
// handler exactly as before (signal_chain.h). A page is readable as a
// whole or not at all, so page-sized steps tell exactly how much was
// readable.
//
// The kernel kills a thread that faults with SIGSEGV/SIGBUS blocked (it
// forces the default action), so a copy that may fault runs only where our
// handlers catch it:
//  * they are armed (the agent's start) and still the process's: known
//    without asking when the preload interposes sigaction()
//    (set_signals_interposed, -c); otherwise one rt_sigaction query per
//    signal, and if the program replaced ours through the kernel, ours go
//    back in front (its handler becomes the chained one, signal_chain.h);
//  * on a thread that blocks SIGSEGV or SIGBUS (all-signals-blocked
//    servers with -p; a program handler running; glibc's own block-all
//    windows around clone), they are unblocked for the copies of that one
//    helper call and blocked again after.
// One rt_sigprocmask query per helper call tells; both calls are of the
// @signal set that glibc itself needs (threads, abort, system()). When a
// query fails, or nothing is armed (the CLI's interpreter), the copy falls
// back to process_vm_readv unless the program may be sandboxed
// (set_sandboxed, or a seccomp filter seen at arming), and otherwise fails
// as for unreadable memory (-EFAULT), counted (safe_copy_refusals).
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::helpers {

// Installs the SIGSEGV and SIGBUS handlers (chaining the program's) and
// notes whether a seccomp filter is active. Off the probe path; true when
// both handlers are in.
bool arm_safe_copy();

// The preload interposes sigaction(): ours stays first without asking.
void set_signals_interposed();
bool signals_interposed();
// The program installs (or has) a seccomp filter: no fallback to
// process_vm_readv from now on.
void set_sandboxed();
bool sandboxed();

// Several reads in one helper call decide how to read once (the checks
// above cost a system call or three).
class SafeReader {
public:
  SafeReader();
  ~SafeReader();
  SafeReader(const SafeReader &) = delete;
  SafeReader &operator=(const SafeReader &) = delete;
  // Copies up to n bytes from src; returns how many were readable (a
  // prefix: the first unreadable page ends it). Async-signal-safe, no libc
  // call.
  size_t copy(void *dst, const void *src, size_t n) const;
  // See safe_copy_string.
  size_t copy_string(char *dst, const char *src, size_t max) const;
  // Copies up to n bytes from this call's own memory (src) to dst, which
  // may not be writable; returns how many were written (a prefix: the
  // first page of dst that faults ends it). write_user(), --unsafe only.
  size_t write(void *dst, const void *src, size_t n) const;

private:
  int mode_ = 0;
  bool reblock_ = false;
};

// One-shot SafeReader().copy(...).
size_t safe_copy(void *dst, const void *src, size_t n);

// Copies a NUL-terminated string of at most max bytes (the NUL included if
// it fits), stopping at the page where the NUL is: bytes past the NUL need
// not be readable. Returns the bytes copied including the NUL, or, when no
// NUL was found, the readable prefix (at most max); 0 when src is
// unreadable.
size_t safe_copy_string(char *dst, const char *src, size_t max);

// Reads that could not be done safely (see above): they failed as if the
// memory were unreadable.
uint64_t safe_copy_refusals();

// The preload's sigaction() for SIGSEGV and SIGBUS (signal_chain.h).
bool filter_fault_sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old);

} // namespace ubtrace::runtime::helpers
