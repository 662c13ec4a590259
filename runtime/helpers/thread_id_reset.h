// Forgetting the thread id the helpers keep (process_facts.h), apart for
// code built with general registers only (the agent's system call path),
// which cannot include what process_facts.h needs.
#pragma once

#include <cstdint>

namespace ubtrace::runtime::helpers {

// The thread id current_tid() keeps is asked of the kernel again at the
// next look. For a task that shares its parent's TLS (a vfork child, the
// child of posix_spawn's CLONE_VM|CLONE_VFORK clone), where glibc's word
// and the kept answer are the parent's: called in the child right after
// the clone and in the parent when it returns, before either reads an id.
void forget_thread_id();
// The word forget_thread_id() zeroes, as an offset from the thread pointer
// (the same in every thread: initial-exec TLS), for code that zeroes it
// without a call (the hooks' rewritten clone sites, runtime/hook/hook.h).
int64_t thread_id_word_offset();

} // namespace ubtrace::runtime::helpers
