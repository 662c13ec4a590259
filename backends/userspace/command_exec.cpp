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

} // namespace

void replay_command_exec(const runtime::Bundle &bundle,
                         const ProgramSet &programs, UserspaceTarget &target,
                         BackendHost &host) {
  const runtime::inject::ExecCall *exec = target.exec_call();
  if (!exec)
    return;
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
  std::map<std::string, vm::BoundProgram> bound; // by section
  for (bool exit : {false, true}) {
    ForeignTask task;
    task.pid = task.tid = pid;
    task.cpu = cpu < 0 ? 0 : uint32_t(cpu);
    if (exit) {
      task.time = now_ns();
      task.memory = pid_t(pid); // the new program, by now
    } else {
      task.time = exec->at_ns;
      task.comm = before;
      task.memory = getpid();
    }
    // The result: -ENOSYS at the entry (fill_syscall_ctx).
    const uint64_t ret = exit ? 0 : uint64_t(-ENOSYS);
    for (size_t i = 0; i < bundle.probes.size(); i++) {
      const auto &spec = bundle.probes[i];
      if (spec.kind != runtime::ProbeKind::Syscall)
        continue;
      for (const auto &site : spec.syscalls) {
        if (site.exit != exit || (site.nr != SYS_execve && site.nr != -1))
          continue;
        auto prog = bound.find(spec.section);
        if (prog == bound.end()) {
          auto b = bind_foreign(programs, spec.section);
          if (!b) {
            host.runtime_error("cannot run " + spec.name +
                               " on the command's execve: " + b.error());
            continue;
          }
          prog = bound.emplace(spec.section, std::move(*b)).first;
        }
        abi::HostProbeCtx ctx{};
        fill_syscall_ctx(ctx, site, args, SYS_execve, int64_t(ret));
        ctx.probe_id = target.syscall_probe_id(i, site);
        vm::RunResult r = run_for(task, prog->second, &ctx);
        if (r.status != vm::RunStatus::Ok)
          host.runtime_error(std::string(vm::describe(r.status)) + " in " +
                             site.name + " at PC " + std::to_string(r.stop_pc));
        host.drain_events();
        if (host.exiting())
          return;
      }
    }
  }
}

} // namespace ubtrace::backends
