#include "runtime/agent/owned_fd.h"

#include <cerrno>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" void ubtrace_agent_own_calls(int begin) __attribute__((weak));

namespace ubtrace::agent {
namespace {

// Live OwnedFds, for the fork child handler. A fixed table: the agent owns
// a handful (channel, GPU channel, the GPU service's wake pipe).
constexpr int kSlots = 32;
std::atomic<OwnedFd *> g_live[kSlots];

void enlist(OwnedFd *fd) {
  for (auto &slot : g_live) {
    OwnedFd *none = nullptr;
    if (slot.compare_exchange_strong(none, fd))
      return;
  }
}

void delist(OwnedFd *fd) {
  for (auto &slot : g_live) {
    OwnedFd *mine = fd;
    if (slot.compare_exchange_strong(mine, nullptr))
      return;
  }
}

constexpr rlim_t kHighest = 1024;

// The lowest free number at or above `floor`, trying lower floors when the
// table is full there; -1 if none.
int move_high(int fd) {
  struct rlimit lim{};
  rlim_t soft = 1024;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    soft = lim.rlim_cur;
  // Not above 1024 (owned_fd.h): every fork and vfork copies the table up
  // to its highest number.
  if (soft > kHighest)
    soft = kHighest;
  for (long floor = long(soft) - 64; floor > fd && floor >= 64; floor /= 2) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, int(floor));
    if (high >= 0)
      return high;
  }
  return -1;
}

// The program may wrap getpid() and fstat() (to count calls, to fake
// results): the agent's checks go to the kernel.
pid_t own_pid() {
  return pid_t(syscall(SYS_getpid));
}

bool identify(int fd, dev_t *dev, ino_t *ino) {
  struct stat st{};
  if (syscall(SYS_fstat, fd, &st) != 0)
    return false;
  *dev = st.st_dev;
  *ino = st.st_ino;
  return true;
}

void on_fork_child() {
  // ubtrace's calls in the child, not the program's (syscalls.h OwnCalls;
  // absent where this file is linked without the system call probes).
  if (ubtrace_agent_own_calls)
    ubtrace_agent_own_calls(1);
  for (auto &slot : g_live)
    if (OwnedFd *fd = slot.load())
      fd->forget_in_child();
  if (ubtrace_agent_own_calls)
    ubtrace_agent_own_calls(0);
}

pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
void register_atfork() {
  pthread_atfork(nullptr, nullptr, on_fork_child);
}

} // namespace

OwnedFd OwnedFd::adopt(int fd) {
  OwnedFd out;
  if (fd < 0)
    return out;
  int high = move_high(fd);
  if (high >= 0) {
    ::close(fd); // the low number was ours a moment ago
    fd = high;
  } else {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (!identify(fd, &out.dev_, &out.ino_)) {
    ::close(fd);
    return out;
  }
  out.owner_ = own_pid();
  out.fd_.store(fd, std::memory_order_release);
  enlist(&out);
  return out;
}

OwnedFd::OwnedFd(OwnedFd &&other) noexcept {
  *this = std::move(other);
}

OwnedFd &OwnedFd::operator=(OwnedFd &&other) noexcept {
  if (this == &other)
    return *this;
  forget();
  dev_ = other.dev_;
  ino_ = other.ino_;
  owner_ = other.owner_;
  lost_.store(other.lost_.load());
  int fd = other.get();
  other.forget();
  fd_.store(fd, std::memory_order_release);
  if (fd >= 0)
    enlist(this);
  return *this;
}

OwnedFd::~OwnedFd() {
  forget();
}

void OwnedFd::forget() {
  if (fd_.exchange(-1) >= 0)
    delist(this);
}

bool OwnedFd::usable() {
  int fd = get();
  if (fd < 0)
    return false;
  if (own_pid() != owner_)
    return false; // a child's copy: the parent still owns it
  dev_t dev;
  ino_t ino;
  if (identify(fd, &dev, &ino) && dev == dev_ && ino == ino_)
    return true;
  // Closed or replaced by the program: never touch the number again.
  lost_.store(true, std::memory_order_release);
  forget();
  return false;
}

void OwnedFd::close() {
  int fd = get();
  if (fd >= 0 && usable())
    ::close(fd);
  forget();
}

void OwnedFd::forget_in_child() {
  int fd = get();
  dev_t dev;
  ino_t ino;
  if (fd >= 0 && identify(fd, &dev, &ino) && dev == dev_ && ino == ino_)
    ::close(fd);
  forget();
}

void forget_owned_fds_after_fork() {
  pthread_once(&g_atfork_once, register_atfork);
}

} // namespace ubtrace::agent
