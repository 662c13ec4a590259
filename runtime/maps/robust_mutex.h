// Robust, process-shared mutexes (thread slots, thread_slot.h): a holder
// that dies leaves the mutex marked OWNER_DIED by the kernel, whatever
// process and pid namespace it was in.
#pragma once

#include <pthread.h>

namespace ubtrace::runtime::maps {

// Error-checking too, so that a holder re-locking fails instead of
// deadlocking.
bool init_robust_mutex(pthread_mutex_t &mutex);

} // namespace ubtrace::runtime::maps
