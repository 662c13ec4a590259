#include "runtime/helpers/host_helpers.h"

#include <cerrno>
#include <cstdio>
#include <string>
#include <cstring>
#include <ctime>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/abi.h"

namespace ubtrace::runtime::helpers {

namespace {

uint64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// pid and tid, cached per thread; a fork gives the child new ones.
struct Ids {
  uint32_t pid = 0;
  uint32_t tid = 0;
};
thread_local Ids ids;
unsigned fork_generation = 0;
thread_local unsigned ids_generation = ~0u;

void on_fork_child() { __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED); }

const Ids &current_ids() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  unsigned gen = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
  if (ids_generation != gen) {
    ids.pid = static_cast<uint32_t>(getpid());
    ids.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    ids_generation = gen;
  }
  return ids;
}

uint64_t h_ktime_get_ns(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(CLOCK_MONOTONIC);
}
uint64_t h_ktime_get_boot_ns(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(CLOCK_BOOTTIME);
}
uint64_t h_ktime_get_tai_ns(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return clock_ns(CLOCK_TAI);
}
uint64_t h_jiffies64(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  // The kernel's HZ is not visible from user space; 250 is Debian's.
  return clock_ns(CLOCK_MONOTONIC_COARSE) / 4000000ull;
}

uint64_t h_prandom(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  // xorshift64*, seeded per thread from the clock and the thread id.
  thread_local uint64_t state = 0;
  if (state == 0)
    state = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t(current_ids().tid) << 32) ^ 0x9e3779b97f4a7c15ull;
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return static_cast<uint32_t>((state * 0x2545f4914f6cdd1dull) >> 32);
}

uint64_t h_cpu(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : static_cast<uint64_t>(cpu);
}

uint64_t h_numa(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0)
    return 0;
  return node;
}

uint64_t h_pid_tgid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  const Ids &i = current_ids();
  return (uint64_t(i.pid) << 32) | i.tid;
}

uint64_t h_uid_gid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return (uint64_t(getgid()) << 32) | getuid();
}

uint64_t h_comm(uint64_t buf, uint64_t size, uint64_t, uint64_t, uint64_t) {
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  auto *dst = reinterpret_cast<char *>(buf);
  if (size == 0)
    return static_cast<uint64_t>(-EINVAL);
  size_t n = strnlen(name, 16);
  if (n >= size)
    n = size - 1;
  std::memcpy(dst, name, n);
  std::memset(dst + n, 0, size - n);
  return 0;
}

uint64_t h_probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t, uint64_t) {
  return static_cast<uint64_t>(safe_read(reinterpret_cast<void *>(dst), size,
                                         reinterpret_cast<const void *>(src)));
}

uint64_t h_probe_read_kernel(uint64_t dst, uint64_t size, uint64_t, uint64_t, uint64_t) {
  // No kernel memory here.
  std::memset(reinterpret_cast<void *>(dst), 0, size);
  return static_cast<uint64_t>(-EFAULT);
}

uint64_t h_probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t, uint64_t) {
  return static_cast<uint64_t>(safe_read_str(reinterpret_cast<void *>(dst), size,
                                             reinterpret_cast<const void *>(src)));
}

uint64_t h_get_stack(uint64_t ctx, uint64_t buf, uint64_t size, uint64_t flags, uint64_t) {
  // User stacks by frame pointers, like the kernel's user unwinder: the
  // probed ip, then the return address of each frame on the rbp chain.
  auto *out = reinterpret_cast<uint64_t *>(buf);
  uint64_t max = size / 8;
  if (!(flags & BPF_F_USER_STACK) || ctx == 0 || max == 0)
    return 0;
  const auto *regs = reinterpret_cast<const abi::PtRegsLayout *>(ctx);
  uint64_t n = 0;
  if (regs->rip == 0)
    return 0;
  out[n++] = regs->rip;
  // At a function's first instruction the frame is not set up yet: rbp is
  // still the caller's, so its return address is only at [rsp]. Take it
  // from there (as Linux does for uprobes at function entry), then walk on.
  const auto *host = reinterpret_cast<const abi::HostProbeCtx *>(ctx);
  if (host->func_ip != 0 && regs->rip == host->func_ip && n < max) {
    uint64_t ret = 0;
    if (safe_read(&ret, sizeof ret, reinterpret_cast<const void *>(regs->rsp)) == 0 &&
        ret != 0)
      out[n++] = ret;
  }
  uint64_t fp = regs->rbp;
  while (n < max && fp != 0 && (fp & 7) == 0) {
    uint64_t frame[2];
    if (safe_read(frame, sizeof frame, reinterpret_cast<const void *>(fp)) != 0)
      break;
    if (frame[1] == 0)
      break;
    out[n++] = frame[1];
    if (frame[0] <= fp) // frames grow upwards; anything else is garbage
      break;
    fp = frame[0];
  }
  return n * 8;
}

uint64_t h_send_signal(uint64_t sig, uint64_t, uint64_t, uint64_t, uint64_t) {
  return kill(getpid(), static_cast<int>(sig)) == 0 ? 0 : static_cast<uint64_t>(-errno);
}

uint64_t h_cgroup_id(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  // The cgroup2 directory's inode, as the kernel reports cgroup ids.
  static uint64_t cached = [] {
    char line[4096];
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
      return uint64_t(0);
    uint64_t id = 0;
    while (fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "0::", 3) != 0)
        continue;
      line[strcspn(line, "\n")] = 0;
      std::string path = std::string("/sys/fs/cgroup") + (line + 3);
      struct stat st;
      if (stat(path.c_str(), &st) == 0)
        id = st.st_ino;
    }
    fclose(f);
    return id;
  }();
  return cached;
}

uint64_t h_current_task(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) { return 0; }

constexpr maps::HelperEntry kHelpers[] = {
    {BPF_FUNC_probe_read, "probe_read", h_probe_read},
    {BPF_FUNC_ktime_get_ns, "ktime_get_ns", h_ktime_get_ns},
    {BPF_FUNC_get_prandom_u32, "get_prandom_u32", h_prandom},
    {BPF_FUNC_get_smp_processor_id, "get_smp_processor_id", h_cpu},
    {BPF_FUNC_get_current_pid_tgid, "get_current_pid_tgid", h_pid_tgid},
    {BPF_FUNC_get_current_uid_gid, "get_current_uid_gid", h_uid_gid},
    {BPF_FUNC_get_current_comm, "get_current_comm", h_comm},
    {BPF_FUNC_get_current_task, "get_current_task", h_current_task},
    {BPF_FUNC_get_numa_node_id, "get_numa_node_id", h_numa},
    {BPF_FUNC_probe_read_str, "probe_read_str", h_probe_read_str},
    {BPF_FUNC_get_current_cgroup_id, "get_current_cgroup_id", h_cgroup_id},
    {BPF_FUNC_get_stack, "get_stack", h_get_stack},
    {BPF_FUNC_send_signal, "send_signal", h_send_signal},
    {BPF_FUNC_probe_read_user, "probe_read_user", h_probe_read},
    {BPF_FUNC_probe_read_kernel, "probe_read_kernel", h_probe_read_kernel},
    {BPF_FUNC_probe_read_user_str, "probe_read_user_str", h_probe_read_str},
    {BPF_FUNC_probe_read_kernel_str, "probe_read_kernel_str", h_probe_read_kernel},
    {BPF_FUNC_jiffies64, "jiffies64", h_jiffies64},
    {BPF_FUNC_ktime_get_boot_ns, "ktime_get_boot_ns", h_ktime_get_boot_ns},
    {BPF_FUNC_ktime_get_tai_ns, "ktime_get_tai_ns", h_ktime_get_tai_ns},
};

} // namespace

long safe_read(void *dst, uint64_t size, const void *src) {
  if (size == 0)
    return 0;
  // process_vm_readv on ourselves: the kernel does the faulting, so a bad
  // pointer is an error code, never a signal in the traced process.
  struct iovec local = {dst, size};
  struct iovec remote = {const_cast<void *>(src), size};
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(size))
    return 0;
  std::memset(dst, 0, size);
  return -EFAULT;
}

long safe_read_str(void *dst, uint64_t size, const void *src) {
  auto *out = static_cast<char *>(dst);
  if (size == 0)
    return -EINVAL;
  // Read what is readable (the string may end right before an unmapped
  // page), then cut at the NUL.
  struct iovec local = {dst, size};
  struct iovec remote = {const_cast<void *>(src), size};
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n <= 0) {
    // A read that crosses into an unmapped page fails as a whole: retry
    // up to the page boundary.
    uint64_t to_page = 4096 - (reinterpret_cast<uint64_t>(src) & 4095);
    if (to_page < size) {
      local.iov_len = remote.iov_len = to_page;
      n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    }
    if (n <= 0) {
      out[0] = 0;
      return -EFAULT;
    }
  }
  size_t len = strnlen(out, static_cast<size_t>(n) < size ? n : size - 1);
  if (len >= size)
    len = size - 1;
  out[len] = 0;
  return static_cast<long>(len + 1);
}

std::span<const maps::HelperEntry> host_helpers() { return kHelpers; }

} // namespace ubtrace::runtime::helpers
