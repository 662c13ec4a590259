// The calling thread's id as glibc keeps it in the thread descriptor, with
// no system call: glibc publishes the field's offset for debuggers
// (_thread_db_pthread_tid), and the kernel clears it when the thread exits
// (CLONE_CHILD_CLEARTID: what pthread_join waits on). So the word also
// tells another thread whether its owner is gone: it no longer holds the
// owner's id (cleared, or the descriptor reused for another thread).
#pragma once

#include <cstdint>

namespace ubtrace::runtime::helpers {

// Finds the field; off the probe path, idempotent.
void prepare_thread_identity();

// The calling thread's id word; null when the field is not known.
const volatile int32_t *thread_id_word();
// The field's offset from glibc's thread pointer (fs:0x10), -1 when not
// known: for general-registers-only code that reads it inline.
long thread_id_offset();

} // namespace ubtrace::runtime::helpers
