#include "runtime/inject/injector.h"

#include "runtime/inject/attach_errors.h"
#include "runtime/inject/borrowed_thread.h"
#include "runtime/inject/deadline.h"
#include "runtime/inject/executable.h"
#include "runtime/inject/loader_block.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/ptrace_thread.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/safe_point.h"
#include "runtime/inject/sys_error.h"
#include "runtime/inject/target_glibc.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

namespace ubtrace::runtime::inject {
namespace {

using std::chrono::milliseconds;

// The scratch region: code page (thunk + trap), loader block, a guard
// page, then the stack for calls made on the borrowed thread: big enough
// for dlopen and the agent's constructors in the Interrupted mode (pages
// are only backed once touched), and the thread's own stack is never
// written.
constexpr uint64_t kPage = 4096;
constexpr uint64_t kBlockOffset = kPage;
constexpr uint64_t kNameOffset = kBlockOffset + UBT_LB_SIZE;
constexpr uint64_t kGuardOffset = kBlockOffset + 2 * kPage;
constexpr uint64_t kStackOffset = kGuardOffset + kPage;
constexpr uint64_t kStackSize = 256 * 1024;
constexpr uint64_t kRegionSize = kStackOffset + kStackSize;
static_assert(UBT_LB_SIZE + 32 <= 2 * kPage);
constexpr char kRegionName[] = "ubtrace-inject";

constexpr uint32_t kRtldNow = 2;
constexpr uint32_t kRtldDlopen =
    0x80000000; // __RTLD_DLOPEN, for __libc_dlopen_mode

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
  uint64_t munmap = 0;

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
  return f;
}

std::optional<std::string> status_line(pid_t pid, const std::string &field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0)
      return line.substr(field.size() + 1);
  return std::nullopt;
}

Result<void> preflight(pid_t pid) {
  std::string who = "process " + std::to_string(pid);
  if (pid <= 0)
    return make_error("invalid process id " + std::to_string(pid));
  if (pid == ::getpid())
    return make_error("cannot inject into ubtrace itself");
  auto state = process_state(pid);
  if (!state)
    return make_error("no such process: " + std::to_string(pid));
  if (*state == 'Z' || *state == 'X')
    return make_error(who + " has exited");
  // Reading its maps needs the same rights as attaching, minus Yama: a
  // refusal here gets the full explanation rather than "cannot open".
  std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  int fd = ::open(maps.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM))
    return make_error(explain_attach_failure(pid, EPERM));
  if (fd >= 0)
    ::close(fd);
  if (*state == 'T')
    return make_error(who +
                      " is stopped by job control; continue it "
                      "first (kill -CONT " +
                      std::to_string(pid) + ")");
  if (auto tracer = tracer_of(pid); tracer && *tracer != 0)
    return make_error("cannot attach to " + std::to_string(pid) +
                      ": it is already traced by process " +
                      std::to_string(*tracer) +
                      " (a debugger or another tracer)");
  if (auto features = status_line(pid, "x86_Thread_features");
      features && features->find("shstk") != std::string::npos)
    return make_error(who + " runs with a CET shadow stack, which the "
                            "injector does not support");
  // 32-bit programs: the ELF class of the executable, when readable.
  std::ifstream exe("/proc/" + std::to_string(pid) + "/exe", std::ios::binary);
  char ident[5] = {};
  if (exe.read(ident, sizeof ident) && ident[4] == 1 /* ELFCLASS32 */)
    return make_error(who + " is a 32-bit program: ubtrace traces x86-64 "
                            "programs only");
  return {};
}

// Thread ids of `pid`, the main thread first.
std::vector<pid_t> list_threads(pid_t pid) {
  std::vector<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return tids;
  while (dirent *entry = ::readdir(d)) {
    pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid > 0)
      tids.push_back(tid);
  }
  ::closedir(d);
  std::sort(tids.begin(), tids.end(), [pid](pid_t a, pid_t b) {
    return (a == pid) != (b == pid) ? a == pid : a < b;
  });
  return tids;
}

bool thread_exists(pid_t pid, pid_t tid) {
  std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  return ::access(path.c_str(), F_OK) == 0;
}

bool process_gone(pid_t pid) {
  auto state = process_state(pid);
  if (!state || *state == 'Z' || *state == 'X')
    return true;
  // Exiting but not yet a zombie: its memory is already gone.
  char exe[64];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  return ::readlink(link.c_str(), exe, sizeof exe) < 0 && errno == ENOENT;
}

Error exited_error(pid_t pid) {
  return make_error("process " + std::to_string(pid) +
                    " exited during injection");
}

struct Borrowed {
  BorrowedThread thread;
  SafePoint where;
  int stops = 0;
};

Result<Borrowed> borrow_safe_thread(pid_t pid, const TargetGlibc &glibc,
                                    const RemoteMemory &memory,
                                    const InjectOptions &options) {
  Deadline deadline(options.safe_point_timeout);
  std::minstd_rand jitter(static_cast<unsigned>(::getpid() ^ pid));
  std::string last_reason;
  int stops = 0;
  for (int round = 0;; ++round) {
    std::vector<pid_t> tids = list_threads(pid);
    if (tids.empty() || process_gone(pid))
      return make_error("process " + std::to_string(pid) + " has exited");
    if (options.only_thread) {
      if (std::find(tids.begin(), tids.end(), options.only_thread) ==
          tids.end())
        return make_error("process " + std::to_string(pid) + " has no thread " +
                          std::to_string(options.only_thread));
      tids = {options.only_thread};
    }
    for (pid_t tid : tids) {
      auto seized = PtraceThread::seize(pid, tid);
      if (!seized) {
        if (process_gone(pid))
          return exited_error(pid);
        if (!thread_exists(pid, tid))
          continue; // it ended between the listing and the attach
        return std::move(seized).take_error();
      }
      if (auto stopped = seized->interrupt(Deadline(milliseconds(2000)));
          !stopped) {
        if (process_gone(pid))
          return exited_error(pid);
        if (!thread_exists(pid, tid))
          continue;
        return std::move(stopped).take_error();
      }
      ++stops;
      auto regs = seized->registers();
      if (!regs) {
        if (!thread_exists(pid, tid))
          continue;
        return std::move(regs).take_error();
      }
      SafePoint where = options.require_safe_point
                            ? classify_stop(*regs, glibc, memory)
                            : SafePoint{true, "not checked"};
      if (where.safe) {
        auto borrowed = BorrowedThread::borrow(std::move(*seized));
        if (!borrowed)
          return std::move(borrowed).take_error();
        return Borrowed{std::move(*borrowed), std::move(where), stops};
      }
      last_reason = "thread " + std::to_string(tid) + " " + where.reason;
      if (auto ok = seized->detach(); !ok && process_gone(pid))
        return exited_error(pid);
    }
    if (deadline.expired())
      return make_error(
          "no thread of process " + std::to_string(pid) +
          " stopped where it holds no glibc lock within " +
          std::to_string(options.safe_point_timeout.count()) + " ms (" +
          std::to_string(stops) + " stops; last: " + last_reason +
          "); threads parked in pthread_cond_wait/pthread_join/mutex waits "
          "cannot be used until they wake");
    // Let the threads run on; jitter keeps us out of step with periodic
    // programs.
    long micros = std::min(10000L, 100L << std::min(round, 7));
    micros += static_cast<long>(jitter() % static_cast<unsigned>(micros));
    ::usleep(static_cast<useconds_t>(micros));
  }
}

std::string errno_text(int64_t raw) {
  return std::strerror(static_cast<int>(-raw));
}

bool is_syscall_error(int64_t raw) {
  return raw < 0 && raw > -4096;
}

Result<LoaderBlock> make_block(const InjectOptions &options,
                               const std::string &agent,
                               const TargetFunctions &f, uint64_t region) {
  LoaderBlock block{};
  block.dlopen = f.dlopen;
  block.dlsym = f.dlsym;
  block.dlerror = f.dlerror;
  block.pthread_self = f.pthread_self;
  block.pthread_detach = f.pthread_detach;
  block.munmap = f.munmap;
  block.region_base = region;
  block.region_size = kRegionSize;
  block.sigmask = loader_signal_mask();
  block.sleep_sec = 0;
  block.sleep_nsec = 1000000; // 1 ms
  block.ack_polls = 30000;    // then it cleans up without the ack
  block.dlopen_mode = f.dlopen_mode;
  auto copy = [](char *out, size_t capacity, const std::string &text,
                 const char *what) -> Result<void> {
    if (text.size() >= capacity)
      return make_error(std::string(what) + " is too long (" +
                        std::to_string(text.size()) + " bytes, at most " +
                        std::to_string(capacity - 1) + ")");
    std::memcpy(out, text.data(), text.size());
    return {};
  };
  if (auto ok = copy(block.path, sizeof block.path, agent, "the agent path");
      !ok)
    return std::move(ok).take_error();
  if (auto ok = copy(block.entry_name, sizeof block.entry_name,
                     options.entry_symbol, "the entry symbol");
      !ok)
    return std::move(ok).take_error();
  if (auto ok = copy(block.entry_arg, sizeof block.entry_arg,
                     options.entry_argument, "the entry argument");
      !ok)
    return std::move(ok).take_error();
  return block;
}

Result<std::string> agent_path_for(pid_t pid, const std::string &path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved))
    return sys_error("agent " + path, errno);
  std::string in_target = "/proc/" + std::to_string(pid) + "/root" + resolved;
  if (::access(in_target.c_str(), R_OK) != 0)
    return make_error(
        "agent " + std::string(resolved) + " is not visible to process " +
        std::to_string(pid) +
        " (another mount namespace or no permission): " + std::strerror(errno));
  return std::string(resolved);
}

Error load_failure(pid_t pid, const LoaderBlock &block,
                   const InjectOptions &options, const std::string &agent) {
  std::string detail =
      block.error[0] ? std::string(block.error) : std::string("no error text");
  if (block.failed_step == UBT_LB_STEP_DLSYM)
    return make_error("the agent " + agent + " has no entry point '" +
                      options.entry_symbol + "': " + detail);
  return make_error("dlopen of " + agent + " failed in process " +
                    std::to_string(pid) + ": " + detail);
}

class Injection {
public:
  Injection(pid_t pid, const InjectOptions &options, const TargetGlibc &glibc,
            const TargetFunctions &functions, const RemoteMemory &memory,
            std::string agent, Borrowed borrowed)
      : pid_(pid), options_(options), glibc_(glibc), f_(functions),
        memory_(memory), agent_(std::move(agent)),
        borrowed_(std::move(borrowed)) {}

  Result<InjectionReport> run(LoaderThread mode) {
    report_.loader = mode;
    report_.borrowed_tid = borrowed_.thread.thread().tid();
    report_.safe_point = borrowed_.where.reason;
    report_.stops = borrowed_.stops;
    if (auto ok = map_region(); !ok)
      return abandon(std::move(ok).take_error());
    switch (mode) {
    case LoaderThread::New:
      return load_in_new_thread();
    case LoaderThread::Interrupted:
      return load_in_borrowed_thread();
    case LoaderThread::Auto:
      break;
    }
    return abandon(make_error("unreachable loader mode"));
  }

private:
  uint64_t block_address() const { return region_ + kBlockOffset; }
  uint64_t stack_top() const { return region_ + kRegionSize; }

  Result<int64_t> remote_syscall(long nr,
                                 std::initializer_list<uint64_t> args) {
    return borrowed_.thread.syscall(glibc_.syscall_instruction(), nr, args,
                                    Deadline(milliseconds(5000)));
  }

  // Undoes what was done on the borrowed thread and gives it back.
  Error abandon(Error error) {
    if (region_)
      (void)remote_syscall(SYS_munmap, {region_, kRegionSize});
    (void)borrowed_.thread.give_back();
    return error;
  }

  Result<void> map_region() {
    auto mapped = remote_syscall(
        SYS_mmap, {0, kRegionSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, ~uint64_t{0}, 0});
    if (!mapped)
      return std::move(mapped).take_error();
    if (is_syscall_error(*mapped))
      return make_error("mmap in process " + std::to_string(pid_) +
                        " failed: " + errno_text(*mapped));
    region_ = static_cast<uint64_t>(*mapped);
    report_.region = region_;
    report_.region_size = kRegionSize;

    size_t thunk_size =
        static_cast<size_t>(ubt_loader_thunk_end - ubt_loader_thunk_begin);
    std::vector<unsigned char> code(ubt_loader_thunk_begin,
                                    ubt_loader_thunk_end);
    code.resize((thunk_size + 15) & ~size_t{15}, 0xcc);
    trap_ = region_ + code.size();
    code.push_back(0xcc); // int3: where calls on the borrowed thread return
    if (auto ok = memory_.write(region_, code.data(), code.size()); !ok)
      return ok;

    auto block = make_block(options_, agent_, f_, region_);
    if (!block)
      return std::move(block).take_error();
    block_ = *block;
    if (auto ok = memory_.write(block_address(), &block_, sizeof block_); !ok)
      return ok;
    if (auto ok = memory_.write(region_ + kNameOffset, kRegionName,
                                sizeof kRegionName);
        !ok)
      return ok;

    auto protect =
        remote_syscall(SYS_mprotect, {region_, kPage, PROT_READ | PROT_EXEC});
    if (!protect)
      return std::move(protect).take_error();
    if (is_syscall_error(*protect))
      return make_error("mprotect in process " + std::to_string(pid_) +
                        " failed: " + errno_text(*protect));
    auto guard = remote_syscall(SYS_mprotect,
                                {region_ + kGuardOffset, kPage, PROT_NONE});
    if (!guard)
      return std::move(guard).take_error();
    // Best effort (kernels >= 5.17 with CONFIG_ANON_VMA_NAME).
    (void)remote_syscall(SYS_prctl, {PR_SET_VMA, PR_SET_VMA_ANON_NAME, region_,
                                     kRegionSize, region_ + kNameOffset});
    return {};
  }

  Result<uint64_t> call(uint64_t function, std::initializer_list<uint64_t> args,
                        milliseconds budget) {
    return borrowed_.thread.call(memory_, function, args, stack_top(), trap_,
                                 Deadline(budget));
  }

  Result<InjectionReport> load_in_new_thread() {
    auto created =
        call(f_.pthread_create,
             {block_address() + UBT_LB_PTHREAD, 0, region_, block_address()},
             options_.load_timeout);
    if (!created)
      return abandon(std::move(created).take_error());
    if (*created != 0)
      return abandon(
          make_error("pthread_create in process " + std::to_string(pid_) +
                     " failed: " + std::strerror(static_cast<int>(*created))));
    // The region now belongs to the loader thread.
    uint64_t region = region_;
    region_ = 0;
    if (auto ok = borrowed_.thread.give_back(); !ok && process_gone(pid_))
      return exited_error(pid_);

    Deadline deadline(options_.load_timeout);
    LoaderBlock block{};
    for (int round = 0;; ++round) {
      auto state =
          memory_.read_value<uint32_t>(region + kBlockOffset + UBT_LB_STATE);
      if (!state) {
        if (process_gone(pid_))
          return exited_error(pid_);
        auto maps = read_maps(pid_);
        if (maps && !find_region(*maps, region))
          return make_error("process " + std::to_string(pid_) +
                            " lost the injector's memory during injection "
                            "(it called execve or unmapped it)");
        return std::move(state).take_error();
      }
      if (*state == UBT_LB_STATE_LOADED || *state == UBT_LB_STATE_FAILED) {
        if (auto ok = memory_.read(region + kBlockOffset, &block, sizeof block);
            !ok)
          return std::move(ok).take_error();
        break;
      }
      if (process_gone(pid_))
        return exited_error(pid_);
      if (deadline.expired())
        return make_error(
            "loading the agent into process " + std::to_string(pid_) +
            " did not finish within " +
            std::to_string(options_.load_timeout.count()) +
            " ms (the agent's constructor or entry point is blocking)");
      ::usleep(round < 50 ? 200 : 1000);
    }
    uint32_t ack = 1;
    (void)memory_.write(region + kBlockOffset + UBT_LB_ACK, &ack, sizeof ack);

    report_.loader_tid = static_cast<pid_t>(block.tid);
    if (block.state == UBT_LB_STATE_FAILED)
      return load_failure(pid_, block, options_, agent_);
    report_.handle = block.handle;
    report_.entry_called = !options_.entry_symbol.empty();
    report_.entry_result = static_cast<int>(block.entry_result);
    return report_;
  }

  Result<InjectionReport> load_in_borrowed_thread() {
    report_.loader_tid = report_.borrowed_tid;
    milliseconds budget = options_.load_timeout;
    LoaderBlock outcome = block_;
    auto handle = call(f_.dlopen,
                       {block_address() + UBT_LB_PATH, f_.dlopen_mode}, budget);
    if (!handle)
      return abandon(std::move(handle).take_error());
    outcome.handle = *handle;
    bool failed = *handle == 0;
    outcome.failed_step = UBT_LB_STEP_DLOPEN;
    if (!failed && !options_.entry_symbol.empty()) {
      outcome.failed_step = UBT_LB_STEP_DLSYM;
      if (!f_.dlsym)
        return abandon(make_error("the target's glibc exports no dlsym"));
      auto entry = call(f_.dlsym,
                        {*handle, block_address() + UBT_LB_ENTRY_NAME}, budget);
      if (!entry)
        return abandon(std::move(entry).take_error());
      failed = *entry == 0;
      if (!failed) {
        auto result =
            call(*entry, {block_address() + UBT_LB_ENTRY_ARG}, budget);
        if (!result)
          return abandon(std::move(result).take_error());
        report_.entry_called = true;
        report_.entry_result =
            static_cast<int>(static_cast<uint32_t>(*result & 0xffffffff));
      }
    }
    if (failed && f_.dlerror) {
      auto text = call(f_.dlerror, {}, budget);
      if (text && *text) {
        auto message = memory_.read_string(*text, UBT_LB_ERROR_MAX - 1);
        if (message)
          std::snprintf(outcome.error, sizeof outcome.error, "%s",
                        message->c_str());
      }
    }
    auto unmapped = remote_syscall(SYS_munmap, {region_, kRegionSize});
    if (unmapped && *unmapped == 0)
      region_ = 0;
    if (auto ok = borrowed_.thread.give_back(); !ok)
      return process_gone(pid_) ? exited_error(pid_)
                                : std::move(ok).take_error();
    if (failed)
      return load_failure(pid_, outcome, options_, agent_);
    report_.handle = *handle;
    return report_;
  }

  pid_t pid_;
  const InjectOptions &options_;
  const TargetGlibc &glibc_;
  TargetFunctions f_;
  const RemoteMemory &memory_;
  std::string agent_;
  Borrowed borrowed_;
  uint64_t region_ = 0;
  uint64_t trap_ = 0;
  LoaderBlock block_{};
  InjectionReport report_;
};

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

Result<InjectionReport> inject(pid_t pid, const InjectOptions &options) {
  if (auto ok = preflight(pid); !ok)
    return std::move(ok).take_error();
  auto agent = agent_path_for(pid, options.agent_path);
  if (!agent)
    return std::move(agent).take_error();
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

  auto memory = RemoteMemory::open(pid);
  if (!memory)
    return errno == EACCES || errno == EPERM
               ? make_error(explain_attach_failure(pid, EPERM))
               : std::move(memory).take_error();
  for (int attempt = 0;; ++attempt) {
    auto borrowed = borrow_safe_thread(pid, *glibc, *memory, options);
    if (!borrowed)
      return std::move(borrowed).take_error();
    // The layout the decision was made on must still be the one in place
    // (a process that was starting up may have mapped more of glibc since).
    auto now = TargetGlibc::locate(pid);
    if (!now)
      return std::move(now).take_error();
    if (!same_layout(*glibc, *now) && attempt < 3) {
      (void)borrowed->thread.give_back();
      glibc = std::move(now);
      if (auto again = resolve_functions(*glibc); again)
        functions = std::move(again);
      continue;
    }
    Injection injection(pid, options, *glibc, *functions, *memory,
                        std::move(*agent), std::move(*borrowed));
    return injection.run(mode);
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
