#include "runtime/inject/thread_choice.h"

#include "runtime/inject/inject_steps.h"
#include "runtime/inject/loader_block.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/rseq_check.h"
#include "runtime/inject/target_process.h"
#include "runtime/inject/thread_stack.h"

#include <algorithm>
#include <random>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using std::chrono::milliseconds;

struct Prepared {
  BootstrapFrame frame;
  InterruptedCall call;
};

// Why `thread` (stopped) cannot be used, or the frame for it.
// `regs`: the thread's, or as_restarting() them at a system call's entry.
Result<Prepared> prepare(BorrowedThread &thread, const user_regs_struct &regs,
                         const SafePoint &where, const RemoteMemory &memory,
                         LoaderThread mode, const BootstrapInput &job) {
  if (!where.safe)
    return make_error(where.reason);
  pid_t tid = thread.thread().tid();
  // A thread still in an earlier injection's stub (its injector died), or
  // a loader thread in that code.
  const auto code_size =
      static_cast<uint64_t>(ubt_bootstrap_end - ubt_bootstrap_begin);
  if (regs.rip - job.stub < code_size)
    return make_error("is running the injector's bootstrap code");
  if (auto rseq = in_rseq_critical_section(tid, regs, memory))
    return make_error(*rseq);
  std::optional<std::array<uint8_t, 2>> instruction;
  if (needs_instruction_bytes(regs))
    if (auto bytes = memory.read_value<std::array<uint8_t, 2>>(regs.rip - 2))
      instruction = *bytes;
  auto call = interrupted_call(regs, instruction);
  if (!call)
    return std::move(call).take_error();
  if (mode == LoaderThread::Interrupted &&
      call->kind == InterruptedCall::Kind::RestartBlock)
    return make_error("is in a system call that resumes through "
                      "restart_syscall, which the agent's code could disturb "
                      "on this thread");
  BootstrapInput input = job;
  input.regs = regs;
  input.xstate = thread.vector_state();
  input.call = *call;
  auto frame = build_bootstrap_frame(input);
  if (!frame)
    return std::move(frame).take_error();
  auto maps = read_maps(thread.thread().tgid());
  if (!maps)
    return std::move(maps).take_error();
  if (auto room = check_stack_room(*maps, regs, frame->base); !room)
    return std::move(room).take_error();
  return Prepared{std::move(*frame), *call};
}

// A thread stopped in a call that is to restart: let it re-enter the call
// and stop at that entry, where the commit can block signals before the
// thread returns to user space (bootstrap_frame.h). false: it went
// elsewhere (a signal it had to take first, ...).
Result<bool> position(BorrowedThread &thread, const InterruptedCall &call) {
  if (call.kind == InterruptedCall::Kind::None)
    return true;
  return thread.thread().run_to_syscall_entry(
      call.resume_rax, thread.saved_registers().rip,
      Deadline(std::chrono::milliseconds(2000)));
}

// The threads to try, in order: those whose blocking call a stop would
// fail come last.
std::vector<pid_t> candidates(pid_t pid, const InjectOptions &options) {
  std::vector<pid_t> tids = list_threads(pid);
  if (options.only_thread)
    return std::find(tids.begin(), tids.end(), options.only_thread) ==
                   tids.end()
               ? std::vector<pid_t>{}
               : std::vector<pid_t>{options.only_thread};
  std::vector<pid_t> first, later, last;
  for (pid_t tid : tids) {
    auto call = blocked_call(pid, tid);
    if (thread_state(pid, tid) == 'D')
      last.push_back(tid); // may not stop for a long time
    else if (call && interrupt_fails_call(*call))
      later.push_back(tid);
    else
      first.push_back(tid);
  }
  first.insert(first.end(), later.begin(), later.end());
  first.insert(first.end(), last.begin(), last.end());
  return first;
}

} // namespace

Result<ChosenThread> choose_thread(pid_t pid, const TargetGlibc &glibc,
                                   const RemoteMemory &memory,
                                   const InjectOptions &options,
                                   LoaderThread mode,
                                   const BootstrapInput &job) {
  Deadline deadline(options.safe_point_timeout);
  const SafePoints safe_points(glibc);
  std::minstd_rand jitter(static_cast<unsigned>(::getpid() ^ pid));
  std::string last_reason;
  int stops = 0;
  for (int round = 0;; ++round) {
    if (process_gone(pid))
      return make_error("process " + std::to_string(pid) + " has exited");
    std::vector<pid_t> tids = candidates(pid, options);
    if (tids.empty())
      return options.only_thread
                 ? make_error("process " + std::to_string(pid) +
                              " has no thread " +
                              std::to_string(options.only_thread))
                 : make_error("process " + std::to_string(pid) + " has exited");
    for (pid_t tid : tids) {
      auto seized = PtraceThread::seize(pid, tid);
      if (!seized) {
        if (process_gone(pid))
          return exited_error(pid);
        if (!thread_exists(pid, tid))
          continue; // it ended between the listing and the attach
        return std::move(seized).take_error();
      }
      reached(InjectStep::Seized);
      // A thread stops at once unless it sleeps uninterruptibly (those
      // come last) or the machine is very busy: the whole budget.
      Deadline stop_by(milliseconds(std::max(2000, deadline.remaining_ms())));
      if (auto stopped = seized->interrupt(stop_by); !stopped) {
        if (process_gone(pid))
          return exited_error(pid);
        if (!thread_exists(pid, tid))
          continue;
        return std::move(stopped).take_error();
      }
      reached(InjectStep::Stopped);
      ++stops;
      auto borrowed = BorrowedThread::borrow(std::move(*seized));
      if (!borrowed) {
        if (!thread_exists(pid, tid))
          continue;
        return std::move(borrowed).take_error();
      }
      SafePoint where =
          options.require_safe_point
              ? safe_points.classify(borrowed->saved_registers(), memory)
              : SafePoint{true, "not checked"};
      auto prepared = prepare(*borrowed, borrowed->saved_registers(), where,
                              memory, mode, job);
      if (prepared) {
        auto positioned = position(*borrowed, prepared->call);
        if (!positioned) {
          if (process_gone(pid))
            return exited_error(pid);
          return std::move(positioned).take_error();
        }
        if (*positioned) {
          reached(InjectStep::Chosen);
          bool at_entry = prepared->call.kind != InterruptedCall::Kind::None;
          return ChosenThread{std::move(*borrowed), std::move(where),
                              std::move(prepared->frame), stops, at_entry};
        }
        last_reason = "thread " + std::to_string(tid) +
                      " moved on while being positioned";
      } else {
        last_reason = "thread " + std::to_string(tid) + " " + prepared.error();
      }
      if (auto ok = borrowed->give_back(); !ok && process_gone(pid))
        return exited_error(pid);
    }
    if (deadline.expired())
      return make_error("no thread of process " + std::to_string(pid) +
                        " stopped where the injector can use it within " +
                        std::to_string(options.safe_point_timeout.count()) +
                        " ms (" + std::to_string(stops) +
                        " stops; last: " + last_reason + ")");
    // Let the threads run on; jitter keeps us out of step with periodic
    // programs.
    long micros = std::min(10000L, 100L << std::min(round, 7));
    micros += static_cast<long>(jitter() % static_cast<unsigned>(micros));
    ::usleep(static_cast<useconds_t>(micros));
  }
}

Result<ChosenThread> use_held_thread(PtraceThread thread, bool at_entry,
                                     const TargetGlibc &glibc,
                                     const RemoteMemory &memory,
                                     LoaderThread mode,
                                     const BootstrapInput &job) {
  pid_t pid = thread.tgid(), tid = thread.tid();
  auto borrowed = BorrowedThread::borrow(std::move(thread));
  if (!borrowed)
    return process_gone(pid) ? exited_error(pid)
                             : std::move(borrowed).take_error();
  const user_regs_struct regs = at_entry
                                    ? as_restarting(borrowed->saved_registers())
                                    : borrowed->saved_registers();
  SafePoint where = SafePoints(glibc).classify(regs, memory);
  auto prepared = prepare(*borrowed, regs, where, memory, mode, job);
  if (!prepared)
    return make_error("thread " + std::to_string(tid) + " " + prepared.error());
  if (!at_entry) {
    auto positioned = position(*borrowed, prepared->call);
    if (!positioned)
      return process_gone(pid) ? exited_error(pid)
                               : std::move(positioned).take_error();
    if (!*positioned)
      return make_error("thread " + std::to_string(tid) +
                        " moved on while being positioned");
    at_entry = prepared->call.kind != InterruptedCall::Kind::None;
  }
  reached(InjectStep::Chosen);
  return ChosenThread{std::move(*borrowed), std::move(where),
                      std::move(prepared->frame), 1, at_entry};
}

} // namespace ubtrace::runtime::inject
