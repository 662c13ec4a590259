// The -c command's system calls from its execve to the agent's start: the
// dynamic loader's (ld.so.cache, each library opened, read, mapped,
// protected), and those of the libraries' initialisers that run before
// ubtrace's. No agent can see them (it is among what is being loaded), yet
// bpftrace's probes, attached before the command's exec, do; so do
// strace's. The CLI follows them instead (spawn.h's follow_loader):
//
//   child:  ptrace(PTRACE_TRACEME); execve(...)      -> stops after exec
//   CLI:    follow_loader(pid, pidfd, 10s)  PTRACE_SYSCALL stop to stop, each
//           call's number, arguments, result and times, the strings it
//           reads (filename, pathname...) as they were at its entry, and
//           what its other pointers point to at its entry and its exit;
//           detaches at getpid(UBT_LOADER_DONE_MARK) (agent/loader_mark.h),
//           the first of ubtrace's initialisers
//   CLI:    mark_ubtraces_calls(...)  which calls loaded ubtrace's own
//           libraries (the program without ubtrace would not make them)
//
// The CLI then runs the system call probes on the rest, as the program
// (backends/userspace/command_exec.h). It costs two stops per call (~30
// calls for /bin/true, a millisecond) and only when the script has system
// call probes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

// Bytes of the process's memory as they were at a stop of a call.
struct KeptBytes {
  uint64_t address = 0;
  std::string bytes; // a string's with its NUL, or what could be read
};

struct LoaderCall {
  int64_t nr = -1;
  uint64_t args[6] = {};
  int64_t ret = 0;
  bool returned = false; // its exit was seen (not the last, cut short)
  uint64_t enter_ns = 0, exit_ns = 0; // CLOCK_MONOTONIC, at the stops
  // At its entry: its string arguments (whole), and what its other
  // pointers point to (the first KiB, or up to an unmapped page).
  std::vector<KeptBytes> kept;
  // At its exit: those pointers' again (what the call wrote), then the
  // strings as they were at its entry.
  std::vector<KeptBytes> kept_exit;
  // Made to load ubtrace's own libraries (mark_ubtraces_calls).
  bool ubtraces = false;
};

struct LoaderCalls {
  std::vector<LoaderCall> calls;
  // Empty when every call up to the agent was seen; else why not all
  // were (not followed at all, or cut short).
  std::string missing;
  // The program ended while followed: its wait status (it is reaped).
  std::optional<int> ended;
  uint64_t followed_ns = 0; // how long the following took
  // Processes it forked while followed (an initialiser's fork): not
  // followed, their calls until their own agent runs unseen. Threads it
  // started meanwhile: not followed either, their calls until the agent's
  // start unseen (traced from there).
  size_t forked = 0, threads = 0;
};

// Follows `pid`, a child of this thread that asked to be traced
// (PTRACE_TRACEME) and exec'd, from its exec stop until it makes
// getpid(UBT_LOADER_DONE_MARK), ends, or `timeout` passes; then detaches.
// What it does between getpid(UBT_LOADER_OWN_BEGIN_MARK) and
// getpid(UBT_LOADER_OWN_END_MARK) is left out. Signals it gets meanwhile are
// delivered to it as they come. `pidfd` is its pidfd (-1: none), for the
// SIGSTOP that ends a following past `timeout`.
LoaderCalls follow_loader(pid_t pid, int pidfd,
                          std::chrono::milliseconds timeout);

// Marks the calls that loaded ubtrace's libraries into `program` (the
// executable's path): the files `ours` (the agent's, as LD_PRELOAD and
// its DT_NEEDED name them) and what they need that the program and its
// other libraries do not. A library's calls run from its openat (and the
// failed ones of the search before it) to its close, and its mappings'
// later mprotect and munmap.
void mark_ubtraces_calls(LoaderCalls &calls, const std::string &program,
                         const std::vector<std::string> &ours);

} // namespace ubtrace::runtime::inject
