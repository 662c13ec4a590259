// libubtrace_agent.so's first initialiser (the lowest priority number runs
// before every other of this library, its C++ runtime's included).
//
// The library's initialisers run among the -c command's loader calls,
// which the CLI follows (runtime/inject/loader_calls.h): any system call
// they make would pass for the program's. The only ones they make are the
// process's first malloc's (the tcache key's getrandom, the heap's two
// brk): libstdc++'s emergency exception pool is allocated by its static
// initialiser. So the first allocation is made here, between marks that
// tell the CLI these calls are ubtrace's; the pool then fits in the heap
// already there. A program that allocates later finds malloc ready, as
// it would had any library of its own allocated first.
#include "runtime/agent/loader_mark.h"
#include "runtime/agent/raw_syscall.h"

#include <cstdlib>
#include <sys/syscall.h>

namespace {

__attribute__((constructor(101))) void ubtrace_agent_first_init() {
  using ubtrace::agent::raw_syscall;
  raw_syscall(SYS_getpid, UBT_LOADER_OWN_BEGIN_MARK);
  // volatile: the compiler may not drop the pair.
  void *volatile first = std::malloc(1);
  std::free(first);
  raw_syscall(SYS_getpid, UBT_LOADER_OWN_END_MARK);
}

} // namespace
