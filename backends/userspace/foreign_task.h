// Probes the CLI runs on behalf of another thread: a system-wide sample
// (system_sampler.h) or the -c command's own execve (userspace_backend.h),
// which no agent can see. The program runs on the CLI's interpreter, bound
// to the host's helpers with those that describe the current task
// answering for the other thread instead:
//
//   pid, tid, cpu, nsecs        the task's, as given
//   comm                        as given, else its name (TaskNames)
//   uid, gid, ppid, cgroup,     read from /proc for its process, once per
//   the parent's and leader's   process (forget() drops what was read)
//   names
//   memory reads, write_user()  the given process's memory
//                               (process_vm_readv/writev, or its pin's
//                               /proc/PID/mem), or bytes kept, or none
//   ustack                      the given user call chain
//   signal()                    sent to its process (its pin's pidfd)
#pragma once

#include "backends/program_set.h"
#include "runtime/abi.h"
#include "runtime/bundle.h"
#include "runtime/inject/loader_calls.h"
#include "runtime/result.h"
#include "runtime/vm/interpreter.h"

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ubtrace::backends {

// How a thread's name is found: /proc by default; the sampler keeps names
// current from the kernel's records.
class TaskNames {
public:
  // `out`: 16 bytes, NUL-padded ("" when it cannot be told).
  virtual void name(uint32_t pid, uint32_t tid, uint32_t cpu, char out[16]);

protected:
  ~TaskNames() = default;
};

// A sampled process as the CLI holds it (process_pins.h): its pidfd and
// its memory as it was when pinned (/proc/PID/mem, which keeps to that
// image: it reads nothing once the process ends or execs). A pidfd of -1
// is kProcessGone: the sample's process ended before the CLI got to it.
struct ProcessPin {
  int pidfd = -1;
  int memfd = -1;   // -1: not openable; reads go by pid, then ask pidfd
  uint64_t key = 0; // what was read from /proc for it is kept under it
  // The process is the sample's, but the image the sample saw it has
  // exec'd away: signals and /proc facts go to it, memory reads fail.
  bool image_gone = false;
};
inline constexpr ProcessPin kProcessGone{};
// Whether the process of `pidfd` has ended (the pidfd polls readable):
// its number may name another since.
bool pidfd_ended(int pidfd);

struct ForeignTask {
  uint32_t pid = 0, tid = 0, cpu = 0; // 0, 0: an idle CPU
  uint64_t time = 0;                  // nsecs (CLOCK_MONOTONIC)
  const char *comm = nullptr;         // its name, else names->name()
  TaskNames *names = nullptr;         // null: /proc
  pid_t memory = 0;                   // whose memory reads read; 0: none
  // Which process `pid` was, where the number alone may name another by
  // the time a helper acts on it (a system-wide sample, handled later):
  // reads, writes, signals and /proc facts go to that process or fail
  // (counted). Null where the number is sure: the CLI's unreaped child.
  const ProcessPin *pin = nullptr;
  const uint64_t *chain = nullptr; // ustack, innermost first
  size_t chain_len = 0;
  // Where the memory is gone by now (the command's calls before its agent
  // ran): reads get these bytes, kept when it made the call, and nothing
  // else (counted: foreign_reads_unkept).
  const std::vector<runtime::inject::KeptBytes> *kept = nullptr;
};

// The program of `section` bound to the helpers that answer for another
// task.
Result<vm::BoundProgram> bind_foreign(const ProgramSet &programs,
                                      const std::string &section);
// Whether `program` (bound by bind_foreign()) may act on the task's
// process: read or write its memory, signal it, ask /proc of it. Where no
// program does, its pin is not needed.
bool acts_on_process(const vm::BoundProgram &program);
// Runs `program` (bound by bind_foreign()) on `ctx` for `task`.
vm::RunResult run_for(const ForeignTask &task, const vm::BoundProgram &program,
                      void *ctx);
// A system call probe's context at `site` for call `nr` with `args` and
// result `ret` (-ENOSYS at the entry, as the kernel's pt_regs holds it
// there): the argument registers, the number, the result, and each ctx
// argument slot from where the site says (ast/syscalls.h's sources).
void fill_syscall_ctx(abi::HostProbeCtx &ctx, const runtime::SyscallSite &site,
                      const uint64_t args[6], int64_t nr, int64_t ret);
// Memory reads that found their process ended (ESRCH), or its number
// gone to another or its image replaced by an exec (a pin), so far.
uint64_t foreign_reads_gone();
// Memory reads of a task with `kept` bytes that asked for others, so far.
uint64_t foreign_reads_unkept();
// What was read from /proc for process `pid` is stale (it ended).
void forget_process(uint32_t pid);
// What was read from /proc for the process pinned under `key` is stale.
void forget_pinned(uint64_t key);

} // namespace ubtrace::backends
