#include "runtime/inject/injector.h"

#include "runtime/inject/agent_placement.h"
#include "runtime/inject/attach_errors.h"
#include "runtime/inject/bootstrap_frame.h"
#include "runtime/inject/code_cave.h"
#include "runtime/inject/deadline.h"
#include "runtime/inject/exec_hold.h"
#include "runtime/inject/executable.h"
#include "runtime/inject/inject_steps.h"
#include "runtime/inject/loader_block.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/region_placement.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/sys_error.h"
#include "runtime/inject/target_glibc.h"
#include "runtime/inject/target_process.h"
#include "runtime/inject/thread_choice.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <random>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using std::chrono::milliseconds;

constexpr uint32_t kRtldNow = 2;
constexpr uint32_t kRtldDlopen =
    0x80000000; // __RTLD_DLOPEN, for __libc_dlopen_mode
// The stub blocks everything (the kernel keeps SIGKILL and SIGSTOP).
constexpr uint64_t kAllSignals = ~uint64_t{0};
// Sleeps of the ack waits (1 ms each): the loader thread's, and the
// borrowed thread's (Interrupted mode, failed pthread_create), which
// holds a program thread and so waits less. Both stop waiting as soon as
// the injector is gone.
constexpr uint32_t kLoaderAckPolls = 30000;
constexpr uint32_t kBorrowedAckPolls = 5000;
constexpr int kPlacementAttempts = 3;
constexpr milliseconds kHeldLoadWait{2000};

// Asynchronous signals the loader thread blocks: everything except glibc's
// own (32, 33) and the synchronous ones (a fault in the agent must still
// reach the program's handlers, as must int3 hooks' SIGTRAP).
uint64_t loader_signal_mask() {
  uint64_t mask = ~uint64_t{0};
  for (int sig : {SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, 32, 33})
    mask &= ~(uint64_t{1} << (sig - 1));
  return mask;
}

struct TargetFunctions {
  uint64_t dlopen = 0;
  uint32_t dlopen_mode = kRtldNow;
  uint64_t dlsym = 0, dlerror = 0;
  uint64_t pthread_create = 0, pthread_self = 0, pthread_detach = 0;
  uint64_t munmap = 0, errno_location = 0;

  bool can_make_threads() const {
    return pthread_create && pthread_self && pthread_detach && munmap;
  }
};

Result<TargetFunctions> resolve_functions(const TargetGlibc &glibc) {
  TargetFunctions f;
  auto get = [&glibc](std::string_view name) {
    return glibc.function(name).value_or(0);
  };
  f.dlopen = get("dlopen");
  if (!f.dlopen) {
    f.dlopen = get("__libc_dlopen_mode"); // glibc < 2.34 without libdl
    f.dlopen_mode = kRtldNow | kRtldDlopen;
  }
  if (!f.dlopen)
    return make_error(glibc.libc().path +
                      " exports neither dlopen nor __libc_dlopen_mode");
  f.dlsym = get("dlsym");
  if (!f.dlsym)
    f.dlsym = get("__libc_dlsym");
  f.dlerror = get("dlerror");
  f.pthread_create = get("pthread_create");
  f.pthread_self = get("pthread_self");
  f.pthread_detach = get("pthread_detach");
  f.munmap = get("munmap");
  f.errno_location = get("__errno_location");
  if (!f.errno_location)
    return make_error(glibc.libc().path + " exports no __errno_location");
  return f;
}

// A program started by glibc's dynamic loader that had not mapped libc
// yet when we looked: it has only just been exec'd (or has libc by now).
bool still_starting(pid_t pid) {
  if (process_gone(pid))
    return false;
  auto maps = read_maps(pid);
  if (!maps)
    return false;
  for (const MappedRegion &region : *maps)
    if (classify_glibc_path(region.path) == GlibcPart::Libc)
      return true; // mapped since: look again
  auto interpreter = elf_interpreter("/proc/" + std::to_string(pid) + "/exe");
  return interpreter && *interpreter &&
         classify_glibc_path(**interpreter) == GlibcPart::Loader;
}

// Where glibc's code is, as it may be still being mapped by a process that
// has just started: retried until libc is there.
Result<TargetGlibc> locate_glibc(pid_t pid, const Deadline &deadline) {
  for (;;) {
    auto glibc = TargetGlibc::locate(pid);
    if (glibc || !still_starting(pid) || deadline.expired())
      return glibc;
    ::usleep(1000);
  }
}

bool same_layout(const TargetGlibc &a, const TargetGlibc &b) {
  if (a.objects().size() != b.objects().size())
    return false;
  for (size_t i = 0; i < a.objects().size(); ++i)
    if (a.objects()[i].path != b.objects()[i].path ||
        a.objects()[i].bias != b.objects()[i].bias ||
        a.objects()[i].text != b.objects()[i].text)
      return false;
  return true;
}

std::vector<uint8_t> bootstrap_code() {
  return std::vector<uint8_t>(ubt_bootstrap_begin, ubt_bootstrap_end);
}

// The program's path as its maps name it ("" if unreadable).
std::string executable_of(pid_t pid) {
  char path[PATH_MAX];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), path, sizeof path);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

Error load_failure(pid_t pid, const LoaderBlock &block,
                   const InjectOptions &options, const std::string &agent) {
  std::string detail =
      block.error[0]
          ? std::string(block.error, strnlen(block.error, sizeof block.error))
          : std::string("no error text");
  if (block.failed_step == UBT_LB_STEP_CREATE)
    return make_error("pthread_create in process " + std::to_string(pid) +
                      " failed: " + std::strerror(block.create_result));
  if (block.failed_step == UBT_LB_STEP_DLSYM)
    return make_error("the agent " + agent + " has no entry point '" +
                      options.entry_symbol + "': " + detail);
  return make_error("dlopen of " + agent + " failed in process " +
                    std::to_string(pid) + ": " + detail);
}

// One injection: the thread is chosen; write, commit, watch.
class Injection {
public:
  Injection(pid_t pid, const InjectOptions &options, const RemoteMemory &memory,
            std::string agent, LoaderThread mode, bool hold_at_entry)
      : pid_(pid), options_(options), memory_(memory), agent_(std::move(agent)),
        mode_(mode), hold_at_entry_(hold_at_entry) {}

  // nullopt: the stub could not map its region (taken meanwhile): try
  // again elsewhere.
  Result<std::optional<InjectionReport>> run(ChosenThread chosen,
                                             const CodeCave &cave,
                                             uint64_t region, uint64_t cookie) {
    region_ = region;
    cookie_ = cookie;
    job_ = chosen.frame.job;
    report_.loader = mode_;
    report_.borrowed_tid = chosen.thread.thread().tid();
    report_.safe_point = chosen.where.reason;
    report_.stops = chosen.stops;
    report_.region = region;
    report_.region_size = UBT_REGION_SIZE;

    // Before the commit: nothing the thread uses is touched.
    auto thread_memory = RemoteMemory::open_thread(pid_, report_.borrowed_tid);
    if (!thread_memory)
      return std::move(thread_memory).take_error();
    if (auto ok = install_code(cave, *thread_memory, bootstrap_code()); !ok)
      return std::move(ok).take_error();
    reached(InjectStep::CaveWritten);
    const BootstrapFrame &frame = chosen.frame;
    if (auto ok =
            memory_.write(frame.base, frame.bytes.data(), frame.bytes.size());
        !ok)
      return std::move(ok).take_error();
    reached(InjectStep::FrameWritten);

    // The commit.
    if (auto ok = chosen.thread.hand_over(
            chosen.at_syscall_entry ? frame.entry_at_syscall : frame.entry);
        !ok)
      return process_gone(pid_) ? exited_error(pid_)
                                : std::move(ok).take_error();
    reached(InjectStep::Committed);
    if (options_.hold && hold_at_entry_) {
      // Held again once the stub has issued the program's call anew.
      user_regs_struct entry = chosen.thread.saved_registers();
      (void)options_.hold->take_back(chosen.thread.keep(), entry,
                                     Deadline(milliseconds(1000)));
    } else if (auto ok = chosen.thread.give_back(); !ok && process_gone(pid_))
      return exited_error(pid_);
    reached(InjectStep::Detached);

    auto block = watch();
    if (!block)
      return std::move(block).take_error();
    if (!*block)
      return std::optional<InjectionReport>{};
    return finish(**block);
  }

private:
  struct JobState {
    uint64_t cookie = 0;
    uint32_t status = 0;
    int32_t error = 0;
  };

  // What the stub says on its job (on the borrowed thread's stack, which
  // the thread overwrites once it runs on: only with our cookie).
  std::optional<JobState> job_state() const {
    auto cookie = memory_.read_value<uint64_t>(job_ + UBT_JOB_COOKIE);
    auto status = memory_.read_value<uint32_t>(job_ + UBT_JOB_STATUS);
    auto error = memory_.read_value<int32_t>(job_ + UBT_JOB_ERROR);
    if (!cookie || !status || !error || *cookie != cookie_)
      return std::nullopt;
    return JobState{*cookie, *status, *error};
  }

  // The block's state, if the region holds our block (the address may
  // hold the program's memory if it mapped there first) and the stub has
  // finished setting the region up: the cookie is there as soon as the
  // block is copied, before the guard page and the name.
  std::optional<uint32_t> block_state() const {
    auto cookie = memory_.read_value<uint64_t>(region_ + UBT_LB_COOKIE);
    if (!cookie || *cookie != cookie_)
      return std::nullopt;
    auto stub = memory_.read_value<uint32_t>(region_ + UBT_LB_STUB_STATE);
    if (!stub || *stub == 0)
      return std::nullopt;
    auto state = memory_.read_value<uint32_t>(region_ + UBT_LB_STATE);
    if (!state)
      return std::nullopt;
    return *state;
  }

  // Polls the region's block until the load's outcome is there, then acks.
  // nullopt: the region could not be mapped.
  Result<std::optional<LoaderBlock>> watch() {
    Deadline deadline(options_.load_timeout);
    // A held program (exec_hold.h) waits for the load a little while, not
    // the whole load_timeout: then it is let go and the load goes on.
    Deadline hold_by(kHeldLoadWait);
    bool region_seen = false;
    for (int round = 0;; ++round) {
      if (options_.hold && options_.hold->held() && hold_by.expired())
        options_.hold->release();
      auto state = block_state();
      if (state) {
        if (!region_seen) {
          region_seen = true;
          reached(InjectStep::RegionSeen);
        }
        if (*state == UBT_LB_STATE_LOADED || *state == UBT_LB_STATE_FAILED) {
          LoaderBlock block{};
          if (auto ok = memory_.read(region_, &block, sizeof block);
              !ok || block.cookie != cookie_)
            return make_error("process " + std::to_string(pid_) +
                              " lost the injector's memory during injection "
                              "(it called execve or unmapped it)");
          reached(InjectStep::ResultSeen);
          uint32_t ack = 1;
          (void)memory_.write(region_ + UBT_LB_ACK, &ack, sizeof ack);
          reached(InjectStep::Acked);
          return std::optional<LoaderBlock>(block);
        }
      } else {
        if (process_gone(pid_))
          return exited_error(pid_);
        if (region_seen)
          return make_error("process " + std::to_string(pid_) +
                            " lost the injector's memory during injection "
                            "(it called execve or unmapped it)");
        if (auto job = job_state()) {
          if (job->status == UBT_JOB_STATUS_MMAP_FAILED &&
              job->error == -EEXIST)
            return std::optional<LoaderBlock>{};
          if (job->status == UBT_JOB_STATUS_MMAP_FAILED)
            return make_error("the injected code could not map its memory in "
                              "process " +
                              std::to_string(pid_) + ": " +
                              std::strerror(-job->error));
          if (job->status == UBT_JOB_STATUS_MASK_FAILED)
            return make_error("the injected code could not block signals in "
                              "process " +
                              std::to_string(pid_) + ": " +
                              std::strerror(-job->error));
        }
      }
      if (process_gone(pid_))
        return exited_error(pid_);
      if (deadline.expired())
        return region_seen
                   ? make_error("loading the agent into process " +
                                std::to_string(pid_) +
                                " did not finish within " +
                                std::to_string(options_.load_timeout.count()) +
                                " ms (the agent's constructor or entry point "
                                "is blocking)")
                   : make_error("thread " +
                                std::to_string(report_.borrowed_tid) +
                                " of process " + std::to_string(pid_) +
                                " did not run the injected code within " +
                                std::to_string(options_.load_timeout.count()) +
                                " ms (is the process stopped, or does a "
                                "signal handler of it jump away, as with "
                                "siglongjmp from a frequent timer?)");
      ::usleep(round < 50 ? 200 : 1000);
    }
  }

  Result<std::optional<InjectionReport>> finish(const LoaderBlock &block) {
    report_.loader_tid = mode_ == LoaderThread::New
                             ? static_cast<pid_t>(block.tid)
                             : report_.borrowed_tid;
    if (block.state == UBT_LB_STATE_FAILED)
      return load_failure(pid_, block, options_, agent_);
    report_.handle = block.handle;
    report_.entry_called = !options_.entry_symbol.empty();
    report_.entry_result = static_cast<int>(block.entry_result);
    return std::optional<InjectionReport>(report_);
  }

  pid_t pid_;
  const InjectOptions &options_;
  const RemoteMemory &memory_;
  std::string agent_;
  LoaderThread mode_;
  bool hold_at_entry_ = false; // lent by options_.hold at a call's entry
  uint64_t region_ = 0, cookie_ = 0, job_ = 0;
  InjectionReport report_;
};

LoaderBlock fixed_block(const TargetFunctions &f, uint64_t region,
                        LoaderThread mode, pid_t pid) {
  LoaderBlock fixed{};
  fixed.dlopen = f.dlopen;
  fixed.dlsym = f.dlsym;
  fixed.dlerror = f.dlerror;
  fixed.pthread_self = f.pthread_self;
  fixed.pthread_detach = f.pthread_detach;
  fixed.munmap = f.munmap;
  fixed.pthread_create = f.pthread_create;
  fixed.errno_location = f.errno_location;
  fixed.dlopen_mode = f.dlopen_mode;
  fixed.region_base = region;
  fixed.region_size = UBT_REGION_SIZE;
  fixed.stack_top = region + UBT_REGION_SIZE;
  fixed.sigmask = loader_signal_mask();
  fixed.sleep_sec = 0;
  fixed.sleep_nsec = 1000000;
  fixed.mode = mode == LoaderThread::New ? UBT_LB_MODE_NEW_THREAD
                                         : UBT_LB_MODE_INTERRUPTED;
  fixed.ack_polls =
      mode == LoaderThread::New ? kLoaderAckPolls : kBorrowedAckPolls;
  fixed.cli_pid = static_cast<uint32_t>(own_pid_seen_by(pid));
  return fixed;
}

// The bootstrap input for any thread: where the stub is, the region, the
// block image.
Result<BootstrapInput> bootstrap_job(const CodeCave &cave, uint64_t region,
                                     const LoaderBlock &fixed,
                                     const LoaderStrings &strings,
                                     uint64_t cookie) {
  auto block = build_loader_block(fixed, strings);
  if (!block)
    return std::move(block).take_error();
  BootstrapInput job;
  auto at = [&cave](const unsigned char *symbol) {
    return cave.address + static_cast<uint64_t>(symbol - ubt_bootstrap_begin);
  };
  job.stub = at(ubt_bootstrap_stub);
  job.stub_masked = at(ubt_bootstrap_stub_masked);
  job.region = region;
  job.region_size = UBT_REGION_SIZE;
  job.block = std::move(*block);
  job.mask_all = kAllSignals;
  job.cookie = cookie;
  return job;
}

// The thread `hold` stopped, checked as any chosen thread.
Result<ChosenThread> lend_held(ExecHold &hold, const TargetGlibc &glibc,
                               const RemoteMemory &memory, LoaderThread mode,
                               const BootstrapInput &job, bool *at_entry) {
  auto thread = hold.lend(at_entry);
  if (!thread)
    return make_error("process " + std::to_string(hold.pid()) +
                      " is no longer held");
  return use_held_thread(std::move(*thread), *at_entry, glibc, memory, mode,
                         job);
}

Result<InjectionReport> inject(pid_t pid, const InjectOptions &options) {
  if (auto ok = preflight(pid, options.hold != nullptr); !ok)
    return std::move(ok).take_error();
  // Kept (a copy, for a process in a container) until the load is over.
  auto placed = PlacedAgent::place(pid, options.agent_path);
  if (!placed)
    return std::move(placed).take_error();
  const std::string *agent = &placed->path();
  Deadline startup(options.safe_point_timeout);
  auto glibc = locate_glibc(pid, startup);
  if (!glibc)
    return std::move(glibc).take_error();
  auto functions = resolve_functions(*glibc);
  if (!functions)
    return std::move(functions).take_error();

  LoaderThread mode = options.loader;
  if (mode == LoaderThread::Auto)
    mode = functions->can_make_threads() ? LoaderThread::New
                                         : LoaderThread::Interrupted;
  if (mode == LoaderThread::New && !functions->can_make_threads())
    return make_error("process " + std::to_string(pid) +
                      " has no pthread_create (glibc < 2.34 without "
                      "libpthread): use the interrupted thread");
  if (!options.entry_symbol.empty() && !functions->dlsym)
    return make_error("the target's glibc exports no dlsym");

  auto memory = RemoteMemory::open(pid);
  if (!memory)
    return errno == EACCES || errno == EPERM
               ? make_error(explain_attach_failure(pid, EPERM))
               : std::move(memory).take_error();
  reached(InjectStep::Located);

  std::random_device seed;
  std::mt19937_64 random((uint64_t{seed()} << 32) ^ seed() ^
                         static_cast<uint64_t>(::getpid()));
  const std::vector<uint8_t> code = bootstrap_code();
  const std::string executable = executable_of(pid);

  for (int attempt = 0;; ++attempt) {
    auto maps = read_maps(pid);
    if (!maps)
      return process_gone(pid) ? exited_error(pid)
                               : std::move(maps).take_error();
    auto cave = find_code_cave(*maps, *memory, code, executable);
    if (!cave)
      return make_error("cannot inject into process " + std::to_string(pid) +
                        ": " + cave.error());
    auto region = attempt == 0 && test_region_address()
                      ? Result<uint64_t>(*test_region_address())
                      : place_region(*maps, UBT_REGION_SIZE, random);
    if (!region)
      return make_error("cannot inject into process " + std::to_string(pid) +
                        ": " + region.error());

    LoaderBlock fixed = fixed_block(*functions, *region, mode, pid);
    fixed.cookie = random();
    auto job = bootstrap_job(
        *cave, *region, fixed,
        {*agent, options.entry_symbol, options.entry_argument}, fixed.cookie);
    if (!job)
      return std::move(job).take_error();

    bool lent_at_entry = false;
    auto chosen =
        options.hold ? lend_held(*options.hold, *glibc, *memory, mode, *job,
                                 &lent_at_entry)
                     : choose_thread(pid, *glibc, *memory, options, mode, *job);
    if (!chosen)
      return std::move(chosen).take_error();
    // The layout the decision was made on must still be the one in place
    // (a process that was starting up may have mapped more of glibc since;
    // not one held past its loader).
    if (!options.hold) {
      auto now = TargetGlibc::locate(pid);
      if (!now)
        return std::move(now).take_error();
      if (!same_layout(*glibc, *now) && attempt < kPlacementAttempts) {
        (void)chosen->thread.give_back();
        glibc = std::move(now);
        if (auto again = resolve_functions(*glibc); again)
          functions = std::move(again);
        continue;
      }
    }
    Injection injection(pid, options, *memory, *agent, mode, lent_at_entry);
    auto outcome =
        injection.run(std::move(*chosen), *cave, *region, job->cookie);
    if (!outcome)
      return std::move(outcome).take_error();
    if (*outcome) {
      InjectionReport report = std::move(**outcome);
      report.agent_placement = placed->how();
      return report;
    }
    if (attempt >= kPlacementAttempts)
      return make_error("the injected code found no free address to map its "
                        "memory in process " +
                        std::to_string(pid));
  }
}

} // namespace

Result<InjectionReport> inject_agent(pid_t pid, const InjectOptions &options) {
  auto report = inject(pid, options);
  // Whatever step found the process gone, say so plainly.
  if (!report && report.error().find("exited") == std::string::npos &&
      report.error().find("no such process") == std::string::npos &&
      process_gone(pid))
    return make_error("process " + std::to_string(pid) + " has exited");
  return report;
}

} // namespace ubtrace::runtime::inject
