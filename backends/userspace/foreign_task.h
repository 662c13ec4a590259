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
//                               (process_vm_readv/writev), or none
//   ustack                      the given user call chain
//   signal()                    sent to its process
#pragma once

#include "backends/program_set.h"
#include "runtime/abi.h"
#include "runtime/bundle.h"
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

struct ForeignTask {
  uint32_t pid = 0, tid = 0, cpu = 0; // 0, 0: an idle CPU
  uint64_t time = 0;                  // nsecs (CLOCK_MONOTONIC)
  const char *comm = nullptr;         // its name, else names->name()
  TaskNames *names = nullptr;         // null: /proc
  pid_t memory = 0;                   // whose memory reads read; 0: none
  const uint64_t *chain = nullptr;    // ustack, innermost first
  size_t chain_len = 0;
};

// The program of `section` bound to the helpers that answer for another
// task.
Result<vm::BoundProgram> bind_foreign(const ProgramSet &programs,
                                      const std::string &section);
// Runs `program` (bound by bind_foreign()) on `ctx` for `task`.
vm::RunResult run_for(const ForeignTask &task, const vm::BoundProgram &program,
                      void *ctx);
// A system call probe's context at `site` for call `nr` with `args` and
// result `ret` (-ENOSYS at the entry, as the kernel's pt_regs holds it
// there): the argument registers, the number, the result, and each ctx
// argument slot from where the site says (ast/syscalls.h's sources).
void fill_syscall_ctx(abi::HostProbeCtx &ctx, const runtime::SyscallSite &site,
                      const uint64_t args[6], int64_t nr, int64_t ret);
// Memory reads that found their process ended (ESRCH), so far.
uint64_t foreign_reads_gone();
// What was read from /proc for process `pid` is stale (it ended).
void forget_process(uint32_t pid);

} // namespace ubtrace::backends
