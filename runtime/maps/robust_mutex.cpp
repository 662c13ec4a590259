#include "runtime/maps/robust_mutex.h"

namespace ubtrace::runtime::maps {

bool init_robust_mutex(pthread_mutex_t &mutex) {
  pthread_mutexattr_t attr;
  if (pthread_mutexattr_init(&attr) != 0)
    return false;
  const bool ok =
      pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0 &&
      pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) == 0 &&
      pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0 &&
      pthread_mutex_init(&mutex, &attr) == 0;
  pthread_mutexattr_destroy(&attr);
  return ok;
}

} // namespace ubtrace::runtime::maps
