// Following the -c command's loader (see loader_calls.h).
#include "runtime/inject/loader_calls.h"

#include "runtime/agent/loader_mark.h"
#include "runtime/inject/elf_dynsym.h"
#include "runtime/inject/unique_fd.h"
#include "runtime/syscalls/syscall_names.h"

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace ubtrace::runtime::inject {
namespace {

uint64_t now_ns() {
  struct timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Up to `most` bytes at `address` in `pid`, read page by page (they may
// end right before an unmapped page); with `string`, up to and with the
// first NUL. What could be read (and whether a NUL ended it).
std::string read_upto(pid_t pid, uint64_t address, size_t most, bool string,
                      bool *ended = nullptr) {
  std::string out;
  char page[4096];
  while (out.size() < most) {
    size_t want = std::min<size_t>(4096 - ((address + out.size()) & 4095),
                                   most - out.size());
    iovec local{page, want};
    iovec remote{reinterpret_cast<void *>(address + out.size()), want};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0)
      break;
    const void *nul = string ? std::memchr(page, 0, size_t(n)) : nullptr;
    if (nul) {
      out.append(page, size_t(static_cast<const char *>(nul) - page) + 1);
      if (ended)
        *ended = true;
      return out;
    }
    out.append(page, size_t(n));
    if (size_t(n) < want)
      break;
  }
  return out;
}

// The string at `address` in `pid`, with its NUL; at most a path's length.
std::optional<std::string> read_string(pid_t pid, uint64_t address) {
  bool ended = false;
  std::string s = read_upto(pid, address, 4096, true, &ended);
  if (!ended)
    return std::nullopt; // unreadable, or no NUL within a path's length
  return s;
}

// What a call's other pointers point to (a struct stat, a buffer read
// into, clone3's arguments), as much as a probe will likely read.
constexpr size_t kKeptBytes = 1024;

void keep_pointed(pid_t pid, const LoaderCall &call,
                  std::vector<KeptBytes> &into) {
  uint8_t pointers = syscall_pointer_args(call.nr);
  for (int i = 0; i < 6; ++i)
    if (pointers & (1u << i) && call.args[i]) {
      std::string bytes = read_upto(pid, call.args[i], kKeptBytes, false);
      if (!bytes.empty())
        into.push_back({call.args[i], std::move(bytes)});
    }
}

// What a fork, vfork, clone or clone3 that returned made: a process, or a
// thread (CLONE_THREAD; clone3's flags are the first field of its struct,
// kept at the call's entry: a thread if unread). Null for other calls.
enum class Made { Nothing, Process, Thread };
Made made_by(const LoaderCall &call) {
  constexpr uint64_t kCloneThread = 0x00010000;
  if (!call.returned || call.ret <= 0)
    return Made::Nothing;
  uint64_t flags = 0;
  switch (call.nr) {
  case SYS_fork:
  case SYS_vfork:
    break;
  case SYS_clone:
    flags = call.args[0];
    break;
  case SYS_clone3:
    flags = kCloneThread;
    for (const auto &k : call.kept)
      if (k.address == call.args[0] && k.bytes.size() >= sizeof flags)
        std::memcpy(&flags, k.bytes.data(), sizeof flags);
    break;
  default:
    return Made::Nothing;
  }
  return flags & kCloneThread ? Made::Thread : Made::Process;
}

// Stops the followed process at the deadline (SIGSTOP, through its pidfd
// where there is one: never another process that took its number), so
// that the CLI, blocked in waitpid, gets it back and lets go.
class Watchdog {
public:
  Watchdog(pid_t pid, int pidfd, std::chrono::milliseconds timeout)
      : thread_([this, pid, pidfd, timeout] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (cv_.wait_for(lock, timeout, [this] { return done_; }))
            return;
          fired_ = true;
          if (pidfd >= 0)
            syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, nullptr, 0);
          else
            kill(pid, SIGSTOP);
        }) {}
  ~Watchdog() {
    disarm();
    thread_.join();
  }
  // No SIGSTOP comes after this; true when one was sent.
  bool disarm() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    return fired();
  }
  bool fired() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fired_;
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, fired_ = false;
  std::thread thread_; // last: it uses the others
};

// The next stop or end of `pid` (a child of this thread); -1 on error.
int next_report(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, __WALL) < 0)
    if (errno != EINTR)
      return -1;
  return status;
}

bool ended(int status) {
  return WIFEXITED(status) || WIFSIGNALED(status);
}

// The signal a stop carries for the program: none for a system call stop,
// nor for a group stop (no siginfo), which kept would stop the following.
// An event stop (an exec made while followed: PTRACE_O_TRACEEXEC) carries
// none either: without the option it would be a SIGTRAP, delivered, and
// deadly.
long signal_of(pid_t pid, int status) {
  if (!WIFSTOPPED(status) || WSTOPSIG(status) == (SIGTRAP | 0x80) ||
      (status >> 16) != 0)
    return 0;
  siginfo_t info;
  return ptrace(PTRACE_GETSIGINFO, pid, nullptr, &info) == 0 ? WSTOPSIG(status)
                                                             : 0;
}

// Lets go of `pid`, stopped, once the watchdog's SIGSTOP (sent, or on its
// way) has come, withheld; other signals go on to it meanwhile.
void detach_after_stop(pid_t pid, LoaderCalls &out) {
  long deliver = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, pid, nullptr,
               reinterpret_cast<void *>(deliver)) != 0)
      return;
    int status = next_report(pid);
    if (status < 0)
      return;
    if (ended(status)) {
      out.ended = status;
      return;
    }
    if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP) {
      ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
      return;
    }
    deliver = signal_of(pid, status);
  }
}

// Whether the following is over at a report of waitpid (`status`, -1: it
// failed, and the rest is not seen): the process ended (`out` says so;
// every call it made was seen, its last one's entry included).
bool over(int status, LoaderCalls &out) {
  if (status < 0) {
    out.missing = std::string("waitpid failed: ") + strerror(errno);
    return true;
  }
  if (!ended(status))
    return false;
  out.ended = status;
  return true;
}

// Lets go of `pid`, stopped at a system call, for good.
void let_go(pid_t pid, Watchdog &dog, LoaderCalls &out) {
  if (dog.disarm())
    detach_after_stop(pid, out); // its SIGSTOP must not reach the program
  else
    ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
}

} // namespace

LoaderCalls follow_loader(pid_t pid, int pidfd,
                          std::chrono::milliseconds timeout) {
  LoaderCalls out;
  Watchdog dog(pid, pidfd, timeout);
  // The exec stop (a SIGTRAP), unless it ended first.
  int status = next_report(pid);
  if (over(status, out))
    return out;
  if (ptrace(PTRACE_SETOPTIONS, pid, nullptr,
             reinterpret_cast<void *>(
                 long(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC))) != 0) {
    out.missing =
        std::string("ptrace(PTRACE_SETOPTIONS) failed: ") + strerror(errno);
    let_go(pid, dog, out);
    return out;
  }
  long deliver = 0;
  bool own = false;       // between ubtrace's own marks
  bool exit_next = false; // the next syscall stop is the exit of a call kept
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, pid, nullptr,
               reinterpret_cast<void *>(deliver)) != 0) {
      out.missing =
          std::string("ptrace(PTRACE_SYSCALL) failed: ") + strerror(errno);
      return out;
    }
    deliver = 0;
    status = next_report(pid);
    if (over(status, out))
      return out;
    if (!WIFSTOPPED(status))
      continue;
    if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
      if (WSTOPSIG(status) == SIGSTOP && dog.fired()) {
        ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
        out.missing = "the command's loader took longer than " +
                      std::to_string(timeout.count()) + " ms";
        return out;
      }
      // A signal for the program: delivered as it resumes.
      deliver = signal_of(pid, status);
      continue;
    }
    __ptrace_syscall_info info{};
    if (ptrace(PTRACE_GET_SYSCALL_INFO, pid,
               reinterpret_cast<void *>(sizeof info), &info) <= 0)
      continue;
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
      exit_next = false;
      if (info.entry.nr == SYS_getpid) {
        switch (info.entry.args[0]) {
        case uint64_t(UBT_LOADER_DONE_MARK):
          let_go(pid, dog, out);
          return out;
        case uint64_t(UBT_LOADER_OWN_BEGIN_MARK):
          own = true;
          continue;
        case uint64_t(UBT_LOADER_OWN_END_MARK):
          own = false;
          continue;
        }
      }
      if (own)
        continue;
      exit_next = true;
      LoaderCall call;
      call.nr = int64_t(info.entry.nr);
      std::memcpy(call.args, info.entry.args, sizeof call.args);
      call.enter_ns = now_ns();
      uint8_t strings = syscall_string_args(call.nr);
      for (int i = 0; i < 6; ++i)
        if (strings & (1u << i) && call.args[i])
          if (auto s = read_string(pid, call.args[i]))
            call.kept.push_back({call.args[i], std::move(*s)});
      keep_pointed(pid, call, call.kept);
      out.calls.push_back(std::move(call));
    } else if (info.op == PTRACE_SYSCALL_INFO_EXIT && exit_next) {
      exit_next = false;
      LoaderCall &call = out.calls.back();
      call.ret = info.exit.rval;
      call.returned = true;
      call.exit_ns = now_ns();
      // As the call left them (what it wrote), before the strings kept.
      keep_pointed(pid, call, call.kept_exit);
      uint8_t strings = syscall_string_args(call.nr);
      for (const auto &k : call.kept)
        for (int i = 0; i < 6; ++i)
          if (strings & (1u << i) && k.address == call.args[i]) {
            call.kept_exit.push_back(k);
            break;
          }
      switch (made_by(call)) {
      case Made::Process:
        ++out.forked;
        break;
      case Made::Thread:
        ++out.threads;
        break;
      case Made::Nothing:
        break;
      }
    }
  }
}

namespace {

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The libraries `path` needs (DT_NEEDED); none where it is no ELF file.
std::vector<std::string> needed_by(const std::string &path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return {};
  auto needed = ElfDynamicSymbols::read_needed(fd.get(), path);
  return needed ? std::move(*needed) : std::vector<std::string>{};
}

const std::string *kept_string(const LoaderCall &call, int arg) {
  for (const KeptBytes &k : call.kept)
    if (k.address == call.args[arg])
      return &k.bytes;
  return nullptr;
}

// The path call `call` opens, if it is an open or openat.
std::optional<std::string> opened_path(const LoaderCall &call) {
  int arg = call.nr == SYS_openat ? 1 : call.nr == SYS_open ? 0 : -1;
  if (arg < 0)
    return std::nullopt;
  const std::string *s = kept_string(call, arg);
  if (!s || s->empty())
    return std::nullopt;
  return s->substr(0, s->size() - 1); // without its NUL
}

} // namespace

void mark_ubtraces_calls(LoaderCalls &calls, const std::string &program,
                         const std::vector<std::string> &ours) {
  // The files the loader opened, by name (the sonames it looks up are
  // the files' base names), and what each needs.
  std::unordered_map<std::string, std::string> opened;
  for (const LoaderCall &call : calls.calls)
    if (call.returned && call.ret >= 0)
      if (auto path = opened_path(call))
        opened.emplace(std::string(base_name(*path)), *path);
  auto closure = [&](std::vector<std::string> roots) {
    std::set<std::string> seen;
    while (!roots.empty()) {
      std::string path = std::move(roots.back());
      roots.pop_back();
      for (const std::string &name : needed_by(path)) {
        auto it = opened.find(name);
        if (seen.insert(name).second && it != opened.end())
          roots.push_back(it->second);
      }
    }
    return seen;
  };
  // The loader looks for what ubtrace's libraries need in their own
  // folder first (their RUNPATH, $ORIGIN), and in that folder's hwcaps,
  // tls and platform subfolders: stats and opens made for them alone.
  std::vector<std::string> our_dirs;
  for (const std::string &path : ours)
    if (size_t slash = path.rfind('/'); slash != std::string::npos)
      our_dirs.push_back(path.substr(0, slash + 1));
  auto searches_ours = [&](const LoaderCall &call) {
    for (const KeptBytes &k : call.kept)
      for (const std::string &dir : our_dirs) {
        std::string_view path(k.bytes.c_str());
        if (!path.starts_with(dir))
          continue;
        std::string_view first = path.substr(dir.size());
        first = first.substr(0, first.find('/'));
        if (first == "glibc-hwcaps" || first == "tls" || first == "x86_64" ||
            first == "haswell" || first == "xeon_phi")
          return true;
      }
    return false;
  };
  std::set<std::string> programs = closure({program});
  std::set<std::string> mine;
  for (const std::string &path : ours)
    mine.insert(std::string(base_name(path)));
  for (const std::string &name : closure(ours))
    if (!programs.count(name))
      mine.insert(name);

  // From a library's open to its close, the loader works on it alone;
  // what it mapped stays ubtrace's.
  std::vector<std::pair<uint64_t, uint64_t>> ranges; // [start, end)
  auto in_ranges = [&](uint64_t start, uint64_t len) {
    for (const auto &[from, to] : ranges)
      if (start >= from && start + len <= to && start + len >= start)
        return true;
    return false;
  };
  int64_t window_fd = -1;
  for (LoaderCall &call : calls.calls) {
    if (window_fd >= 0) {
      call.ubtraces = true;
      if (call.nr == SYS_mmap && call.returned && call.ret >= 0)
        ranges.emplace_back(uint64_t(call.ret),
                            uint64_t(call.ret) + call.args[1]);
      if (call.nr == SYS_close && int64_t(call.args[0]) == window_fd)
        window_fd = -1;
      continue;
    }
    if (searches_ours(call)) {
      call.ubtraces = true;
      continue;
    }
    if (auto path = opened_path(call)) {
      if (mine.count(std::string(base_name(*path)))) {
        call.ubtraces = true;
        if (call.returned && call.ret >= 0)
          window_fd = call.ret;
      }
      continue;
    }
    bool on_range = call.nr == SYS_mprotect || call.nr == SYS_munmap ||
                    call.nr == SYS_madvise ||
                    (call.nr == SYS_mmap && (call.args[3] & MAP_FIXED));
    if (on_range && in_ranges(call.args[0], call.args[1]))
      call.ubtraces = true;
  }
}

} // namespace ubtrace::runtime::inject
