#include "runtime/inject/exec_hold.h"

#include "runtime/inject/proc_maps.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/safe_point.h"
#include "runtime/inject/target_glibc.h"
#include "runtime/inject/target_process.h"

namespace ubtrace::runtime::inject {
namespace {

// The program's call issued again by the stub, not one of the stub's own
// through the same instruction (pthread_create's mmap of a stack goes
// through libc's mmap, as a program's mmap does): the same instruction,
// call, arguments and stack.
bool same_call(const user_regs_struct &a, const user_regs_struct &b) {
  return a.rip == b.rip && a.orig_rax == b.orig_rax && a.rsp == b.rsp &&
         a.rdi == b.rdi && a.rsi == b.rsi && a.rdx == b.rdx && a.r10 == b.r10 &&
         a.r8 == b.r8 && a.r9 == b.r9;
}

} // namespace

Result<ExecHold> ExecHold::seize(pid_t pid) {
  auto thread = PtraceThread::seize(pid, pid);
  if (!thread)
    return std::move(thread).take_error();
  // Stopped at its exec's own stop (the exec was not quite done when
  // seized) serves as well: its new image is there.
  if (auto stopped =
          thread->interrupt(Deadline(std::chrono::milliseconds(200)));
      !stopped && !thread->exec_happened())
    return std::move(stopped).take_error();
  return ExecHold(pid, std::move(*thread));
}

Result<bool> ExecHold::read_loader() {
  loader_.clear();
  auto maps = read_maps(pid_);
  if (!maps)
    return std::move(maps).take_error();
  for (const MappedRegion &r : *maps)
    if (r.executable && classify_glibc_path(r.path) == GlibcPart::Loader)
      loader_.emplace_back(r.start, r.end);
  return !loader_.empty();
}

bool ExecHold::in_loader(uint64_t rip) const {
  for (const auto &[start, end] : loader_)
    if (rip >= start && rip < end)
      return true;
  return false;
}

Result<bool> ExecHold::run_past_loader(const Deadline &deadline) {
  if (!thread_)
    return false;
  auto loader = read_loader();
  if (!loader || !*loader)
    return loader;
  for (;;) {
    auto step = thread_->next_syscall_entry(deadline);
    if (!step)
      return std::move(step).take_error();
    at_entry_ = *step == PtraceThread::Step::Entry;
    if (*step == PtraceThread::Step::Other)
      return false;
    if (*step == PtraceThread::Step::Exec) {
      // A wrapper exec'd its program: that one's loader now.
      loader = read_loader();
      if (!loader || !*loader)
        return loader;
      continue;
    }
    ++entries_;
    auto regs = thread_->registers();
    if (!regs)
      return std::move(regs).take_error();
    if (!in_loader(regs->rip))
      return true;
  }
}

Result<bool> ExecHold::run_to_safe_entry(std::chrono::milliseconds budget) {
  if (!thread_)
    return false;
  auto glibc = TargetGlibc::locate(pid_);
  if (!glibc)
    return std::move(glibc).take_error();
  auto memory = RemoteMemory::open(pid_);
  if (!memory)
    return std::move(memory).take_error();
  const SafePoints safe_points(*glibc);
  const Deadline deadline(budget);
  for (;;) {
    if (at_entry_) {
      auto regs = thread_->registers();
      if (!regs)
        return std::move(regs).take_error();
      SafePoint where = safe_points.classify(*regs, *memory);
      if (where.safe) {
        where_ = where.reason;
        return true;
      }
      why_not_ = where.reason;
    }
    if (deadline.expired())
      return false;
    auto step = thread_->next_syscall_entry(deadline);
    if (!step)
      return std::move(step).take_error();
    // An exec now would need the walk over: not worth holding for.
    if (*step != PtraceThread::Step::Entry) {
      at_entry_ = false;
      if (*step == PtraceThread::Step::Exec)
        why_not_ = "it exec'd again";
      return false;
    }
    at_entry_ = true;
    ++entries_;
  }
}

std::optional<PtraceThread> ExecHold::lend(bool *at_entry) {
  *at_entry = at_entry_;
  std::optional<PtraceThread> lent;
  if (thread_) {
    lent.emplace(std::move(*thread_));
    thread_.reset();
  }
  return lent;
}

Result<bool> ExecHold::take_back(PtraceThread thread,
                                 const user_regs_struct &entry,
                                 const Deadline &deadline) {
  thread_.reset();
  thread_.emplace(std::move(thread));
  for (;;) {
    auto step = thread_->next_syscall_entry(deadline);
    if (!step || *step != PtraceThread::Step::Entry) {
      release();
      return step ? Result<bool>(false) : std::move(step).take_error();
    }
    auto regs = thread_->registers();
    if (!regs) {
      release();
      return std::move(regs).take_error();
    }
    if (same_call(*regs, entry)) {
      at_entry_ = true;
      return true;
    }
  }
}

void ExecHold::release() {
  thread_.reset(); // stops it first if it runs, then detaches
}

} // namespace ubtrace::runtime::inject
