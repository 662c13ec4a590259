// The -c preload's signal interposers (preload_signals.c), for -p.
//
// With -p the preload is dlopen'ed into a running program: its sigaction(),
// pthread_sigmask() & co. come after libc's in symbol lookup and the
// program never calls them, so masks it sets later may block SIGTRAP (a
// trap of ours would then kill the thread) and handlers it sets later may
// replace ours. The preload hands its interposers over
// (ubtrace_offer_interposers); at the agent's start this points every
// loaded object's GOT entries for those functions (PLT slots and function
// pointers resolved at load) at them, as LD_PRELOAD would have bound them.
// Not covered: calls through a pointer the program took before the
// attach, libc's own internal calls (as with -c), objects loaded later
// (interpose_new_objects covers those the agent is told about).
#pragma once

#include <cstddef>

namespace ubtrace::agent {

struct Interposer {
  const char *name;
  void *fn;
};

// Kept for interpose_loaded_objects (the preload's table, static storage).
void offer_interposers(const Interposer *table, size_t count);

// Points the GOT entries of every loaded object (but libc, the dynamic
// linker and ubtrace's own libraries) at the offered interposers. Off the
// probe path; true when an offer was made and every entry found could be
// written. Idempotent (a patched entry is left alone).
bool interpose_loaded_objects();

} // namespace ubtrace::agent
