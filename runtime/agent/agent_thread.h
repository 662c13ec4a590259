// Threads the agent runs inside the traced process (the channel thread,
// the GPU service thread). They take no signals sent to the process (those
// are the program's) but keep the synchronous ones (a function being
// patched traps, and the hook's handler must see it), and hooks never fire
// on them: their libc calls are ubtrace's, not the program's.
#pragma once

#include "runtime/agent/profile.h"
#include "runtime/agent/syscalls.h"
#include "runtime/hook/hook.h"

#include <csignal>
#include <pthread.h>

namespace ubtrace::agent {

struct AgentThreadStart {
  void *(*fn)(void *);
  void *arg;
};

inline void *agent_thread_main(void *p) {
  // First: its own system calls are ubtrace's, never the program's.
  syscalls::agent_thread_started();
  AgentThreadStart start = *static_cast<AgentThreadStart *>(p);
  delete static_cast<AgentThreadStart *>(p);
  runtime::hook::exclude_current_thread();
  profile::agent_thread_started();
  return start.fn(start.arg);
}

// Starts `fn(arg)` detached; false if the thread could not start.
inline bool start_agent_thread(void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  for (int sig : {SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE})
    sigdelset(&all, sig);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  auto *start = new AgentThreadStart{fn, arg};
  pthread_t t;
  int rc = pthread_create(&t, nullptr, agent_thread_main, start);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    delete start;
    return false;
  }
  pthread_detach(t);
  return true;
}

} // namespace ubtrace::agent
