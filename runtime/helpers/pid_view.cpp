#include "runtime/helpers/pid_view.h"

#include "runtime/helpers/process_facts.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/probe_safe.h"

#include <atomic>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::helpers {
namespace {

// PROC_PID_INIT_INO: the initial PID namespace's inode, fixed since 3.8.
constexpr char kInitialPidNs[] = "pid:[4026531836]";

enum Initial : int { kUnknown, kOwn, kView };

std::atomic<int> g_view_fd{-1};      // the CLI's /proc, -1: no view
std::atomic<uint32_t> g_view_gen{0}; // a new view drops every cache
std::atomic<int> g_initial{-1};      // Initial; -1: not decided yet
std::atomic<uint64_t> g_misses{0};
// The descriptor's file when it was handed over: a program that closed it
// and reused the number (for its own /proc, say) is not read through.
std::atomic<uint64_t> g_view_dev{0}, g_view_ino{0};

struct View {
  uint32_t inner_tid; // the thread's own number the value was read for
  uint32_t gen;
  uint64_t value; // pid << 32 | tid, the CLI's view
};
__thread View t_view __attribute__((tls_model("initial-exec"))) = {0, 0, 0};

uint64_t own_pid_tgid() {
  return (uint64_t(current_pid()) << 32) | current_tid();
}

// "P/task/T" (readlink's bytes, n of them) into P << 32 | T.
bool parse_thread_self(const char *s, long n, uint64_t *out) {
  uint64_t pid = 0, tid = 0;
  long i = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9' && pid <= 0xffffffffu; ++i)
    pid = pid * 10 + uint64_t(s[i] - '0');
  static const char kTask[] = "/task/";
  if (i == 0 || n - i < 7)
    return false;
  for (int k = 0; k < 6; ++k, ++i)
    if (s[i] != kTask[k])
      return false;
  long digits = i;
  for (; i < n && s[i] >= '0' && s[i] <= '9' && tid <= 0xffffffffu; ++i)
    tid = tid * 10 + uint64_t(s[i] - '0');
  if (i != n || i == digits || pid == 0 || tid == 0 || pid > 0xffffffffu ||
      tid > 0xffffffffu)
    return false;
  *out = (pid << 32) | tid;
  return true;
}

bool link_is(int dirfd, const char *path, const char *expected) {
  char buf[64];
  ssize_t n = ::readlinkat(dirfd, path, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = 0;
  return std::strcmp(buf, expected) == 0;
}

int initial_mode() {
  int mode = g_initial.load(std::memory_order_acquire);
  return mode < 0 ? kUnknown : mode;
}

} // namespace

bool in_initial_pid_namespace() {
  return link_is(AT_FDCWD, "/proc/self/ns/pid", kInitialPidNs);
}

void prepare_pid_view() {
  int expected = -1;
  g_initial.compare_exchange_strong(
      expected, in_initial_pid_namespace() ? kOwn : kUnknown);
}

void use_pid_view(int procfs, bool procfs_is_initial) {
  if (procfs < 0) {
    g_view_fd.store(-1, std::memory_order_release);
    return;
  }
  char buf[32];
  ssize_t n = ::readlinkat(procfs, "self", buf, sizeof buf - 1);
  uint64_t self = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
    self = self * 10 + uint64_t(buf[i] - '0');
  if (n <= 0 || self == 0)
    return; // not a /proc we can read: the process's own numbers
  g_view_gen.fetch_add(1, std::memory_order_relaxed);
  if (self == uint64_t(::getpid())) {
    // The same namespace as the CLI: its numbers are ours.
    g_view_fd.store(-1, std::memory_order_release);
    g_initial.store(procfs_is_initial ? kOwn : kUnknown,
                    std::memory_order_release);
    return;
  }
  struct stat st{};
  if (::fstat(procfs, &st) != 0)
    return;
  g_view_dev.store(st.st_dev, std::memory_order_relaxed);
  g_view_ino.store(st.st_ino, std::memory_order_relaxed);
  g_initial.store(procfs_is_initial ? kView : kUnknown,
                  std::memory_order_release);
  g_view_fd.store(procfs, std::memory_order_release);
}

uint64_t view_pid_tgid() {
  int fd = g_view_fd.load(std::memory_order_acquire);
  if (fd < 0)
    return own_pid_tgid();
  uint32_t tid = current_tid();
  uint32_t gen = g_view_gen.load(std::memory_order_relaxed);
  if (t_view.inner_tid == tid && t_view.gen == gen)
    return t_view.value;
  if (sandboxed()) {
    // readlinkat may be what its filter forbids.
    g_misses.fetch_add(1, std::memory_order_relaxed);
    return own_pid_tgid();
  }
  struct stat st{};
  if (probe_safe::raw_syscall(SYS_fstat, fd, reinterpret_cast<long>(&st)) !=
          0 ||
      st.st_dev != g_view_dev.load(std::memory_order_relaxed) ||
      st.st_ino != g_view_ino.load(std::memory_order_relaxed)) {
    g_misses.fetch_add(1, std::memory_order_relaxed);
    return own_pid_tgid();
  }
  char buf[48];
  static const char kThreadSelf[] = "thread-self";
  long n = probe_safe::raw_syscall(SYS_readlinkat, fd,
                                   reinterpret_cast<long>(kThreadSelf),
                                   reinterpret_cast<long>(buf), sizeof buf);
  uint64_t value = 0;
  if (n <= 0 || n >= long(sizeof buf) || !parse_thread_self(buf, n, &value)) {
    g_misses.fetch_add(1, std::memory_order_relaxed);
    return own_pid_tgid();
  }
  t_view.inner_tid = tid;
  t_view.gen = gen;
  t_view.value = value;
  return value;
}

uint64_t initial_pid_tgid() {
  switch (initial_mode()) {
  case kOwn:
    return own_pid_tgid();
  case kView:
    return view_pid_tgid();
  default:
    return 0;
  }
}

uint64_t pid_view_misses() {
  return g_misses.load(std::memory_order_relaxed);
}

} // namespace ubtrace::runtime::helpers
