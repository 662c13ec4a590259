// The -c command's own execve (see command_exec.h).
#include "backends/userspace/command_exec.h"

#include "backends/userspace/foreign_task.h"
#include "runtime/abi.h"
#include "runtime/inject/spawn.h"

#include <cerrno>
#include <ctime>
#include <map>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::backends {
namespace {

uint64_t now_ns() {
  struct timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::vector<char *> pointers(const std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (const auto &s : strings)
    out.push_back(const_cast<char *>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Runs the system call probes of one call, as the command's task.
class Replay {
public:
  Replay(const runtime::Bundle &bundle, const ProgramSet &programs,
         UserspaceTarget &target, BackendHost &host)
      : bundle_(bundle), programs_(programs), target_(target), host_(host) {}

  // The probes on the entry (`exit` false; the result -ENOSYS, as the
  // kernel's pt_regs holds it there) or the exit of call `nr`; false once
  // exit() ended the trace.
  bool run(const ForeignTask &task, int64_t nr, const uint64_t args[6],
           int64_t ret, bool exit) {
    if (!exit)
      ret = -ENOSYS;
    for (size_t i = 0; i < bundle_.probes.size(); i++) {
      const auto &spec = bundle_.probes[i];
      if (spec.kind != runtime::ProbeKind::Syscall)
        continue;
      for (const auto &site : spec.syscalls) {
        if (site.exit != exit || (site.nr != nr && site.nr != -1))
          continue;
        auto prog = bound_.find(spec.section);
        if (prog == bound_.end()) {
          auto b = bind_foreign(programs_, spec.section);
          if (!b) {
            host_.runtime_error(
                "cannot run " + spec.name +
                " on the command's calls before its agent: " + b.error());
            continue;
          }
          prog = bound_.emplace(spec.section, std::move(*b)).first;
        }
        abi::HostProbeCtx ctx{};
        fill_syscall_ctx(ctx, site, args, nr, ret);
        ctx.probe_id = target_.syscall_probe_id(i, site);
        vm::RunResult r = run_for(task, prog->second, &ctx);
        if (r.status != vm::RunStatus::Ok)
          host_.runtime_error(std::string(vm::describe(r.status)) + " in " +
                              site.name + " at PC " +
                              std::to_string(r.stop_pc));
        host_.drain_events();
        if (host_.exiting())
          return false;
      }
    }
    return true;
  }

private:
  const runtime::Bundle &bundle_;
  const ProgramSet &programs_;
  UserspaceTarget &target_;
  BackendHost &host_;
  std::map<std::string, vm::BoundProgram> bound_; // by section
};

} // namespace

void replay_command_exec(const runtime::Bundle &bundle,
                         const ProgramSet &programs, UserspaceTarget &target,
                         BackendHost &host) {
  const runtime::inject::ExecCall *exec = target.exec_call();
  if (!exec)
    return;
  Replay replay(bundle, programs, target, host);
  // The call as the child made it, laid out in the CLI's memory (the
  // child's copy is gone with its exec): filename, argv[], envp[].
  std::vector<char *> argv = pointers(exec->argv);
  std::vector<char *> envp = pointers(exec->envp);
  const uint64_t args[6] = {reinterpret_cast<uint64_t>(exec->program.c_str()),
                            reinterpret_cast<uint64_t>(argv.data()),
                            reinterpret_cast<uint64_t>(envp.data()),
                            0,
                            0,
                            0};
  char before[16] = {}; // the forked child's name: this thread's
  prctl(PR_GET_NAME, before);
  const uint32_t pid = uint32_t(target.pid());
  const int cpu = sched_getcpu();
  ForeignTask task;
  task.pid = task.tid = pid;
  task.cpu = cpu < 0 ? 0 : uint32_t(cpu);
  task.time = exec->at_ns;
  task.comm = before;
  task.memory = getpid();
  if (!replay.run(task, SYS_execve, args, 0, false))
    return;
  // The new program, from here: its name (as the target took it after
  // the exec; /proc's if none: a command that ended has none there), and
  // memory gone by now but for what was kept.
  const auto &calls = exec->loader.calls;
  task.comm = target.comm().empty() ? nullptr : target.comm().c_str();
  task.time = calls.empty() ? now_ns() : calls.front().enter_ns;
  task.memory = pid_t(pid);
  if (!replay.run(task, SYS_execve, args, 0, true))
    return;
  for (const auto &call : calls) {
    if (call.ubtraces)
      continue;
    task.kept = &call.kept;
    task.time = call.enter_ns;
    if (!replay.run(task, call.nr, call.args, 0, false))
      return;
    task.time = call.exit_ns;
    task.kept = &call.kept_exit;
    if (call.returned && !replay.run(task, call.nr, call.args, call.ret, true))
      return;
  }
}

} // namespace ubtrace::backends
