// The clone-family `syscall` instructions of libc (clone, clone3, vfork;
// _Fork's clone with them), rewritten for sessions without system call
// probes so that both tasks a clone makes forget the thread id the
// probes' helpers keep (helpers/thread_id_reset.h) before they run
// anything else.
//
// Why: a vfork child, and the child of posix_spawn's and system()'s
// CLONE_VM|CLONE_VFORK clone, run on their parent's TLS, where glibc's
// thread id word and the helpers' kept answer are the parent's. A probe in
// such a child (a uprobe on execve, the very call these children make)
// said the parent's pid and tid, where bpftrace says the child's. With
// system call probes every clone goes through dispatch, whose return does
// the same (syscall_fast.cpp, clone_return); without them nothing of ours
// ran there. The rewritten site (runtime/hook/hook.h, install_syscall_site
// with tls_word_after) makes the call in its trampoline and zeroes the
// kept id's word in whichever task comes back: a few ns per clone, nothing
// on any other call.
//
// Not covered: a clone-family `syscall` outside libc (a program's own
// inline one), which no probe could tell apart without a system call at
// every hit.
#pragma once

#include <cstddef>

namespace ubtrace::agent::clone_sites {

// Before a session's first hook, off the probe path: rewrites the sites
// (once a session). Returns how many are rewritten. A uprobe on vfork
// itself then takes the int3 path (its jump would cover the site's).
size_t rewrite();
// At detach: puts the instructions back (their trampolines stay).
void restore();

} // namespace ubtrace::agent::clone_sites
