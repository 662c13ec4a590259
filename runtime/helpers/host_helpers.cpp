#include "runtime/helpers/host_helpers.h"

#include "runtime/abi.h"
#include "runtime/helpers/pid_view.h"
#include "runtime/helpers/process_facts.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/probe_safe.h"
#include "runtime/unwind/loaded_modules.h"

#include <cerrno>
#include <ctime>
#include <linux/bpf.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::helpers {

namespace {

// Every helper here may run on the probe path inside the traced process:
// no libc call (probe_safe.h, process_facts.h, safe_copy.h).

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

__thread uint64_t t_prandom_state __attribute__((tls_model("initial-exec"))) =
    0;

uint64_t h_prandom(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  // xorshift64*, seeded per thread from the clock and the thread id.
  uint64_t &state = t_prandom_state;
  if (state == 0)
    state = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t(current_tid()) << 32) ^
            0x9e3779b97f4a7c15ull;
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return static_cast<uint32_t>((state * 0x2545f4914f6cdd1dull) >> 32);
}

uint64_t h_cpu(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return current_cpu();
}

uint64_t h_numa(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return current_numa_node();
}

// As the CLI's PID namespace sees the thread (pid_view.h).
uint64_t h_pid_tgid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return view_pid_tgid();
}

uint64_t h_initial_pid_tgid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return initial_pid_tgid();
}

uint64_t h_uid_gid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  auto uid = static_cast<uint32_t>(probe_safe::raw_syscall(SYS_getuid));
  auto gid = static_cast<uint32_t>(probe_safe::raw_syscall(SYS_getgid));
  return (uint64_t(gid) << 32) | uid;
}

// A task's name (16 bytes with its NUL) into the program's buffer of
// `size` bytes, cut to fit and NUL-padded.
uint64_t put_name(uint64_t buf, uint64_t size, const char (&name)[16]) {
  auto *dst = reinterpret_cast<char *>(buf);
  size_t n = probe_safe::bounded_length(name, 15);
  if (n >= size)
    n = size - 1;
  probe_safe::copy_bytes(dst, name, n);
  probe_safe::fill_bytes(dst + n, 0, size - n);
  return 0;
}

uint64_t h_comm(uint64_t buf, uint64_t size, uint64_t, uint64_t, uint64_t) {
  if (size == 0)
    return static_cast<uint64_t>(-EINVAL);
  char name[16];
  current_comm(name);
  return put_name(buf, size, name);
}

uint64_t h_related_comm(uint64_t buf, uint64_t size, uint64_t which, uint64_t,
                        uint64_t) {
  if (size == 0)
    return static_cast<uint64_t>(-EINVAL);
  char name[16];
  related_comm(which == abi::kRelatedLeader ? RelatedTask::Leader
                                            : RelatedTask::Parent,
               name);
  return put_name(buf, size, name);
}

uint64_t h_ppid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return static_cast<uint64_t>(probe_safe::raw_syscall(SYS_getppid));
}

uint64_t h_probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                      uint64_t) {
  return static_cast<uint64_t>(safe_read(reinterpret_cast<void *>(dst), size,
                                         reinterpret_cast<const void *>(src)));
}

uint64_t h_probe_read_kernel(uint64_t dst, uint64_t size, uint64_t, uint64_t,
                             uint64_t) {
  // No kernel memory here.
  probe_safe::fill_bytes(reinterpret_cast<void *>(dst), 0, size);
  return static_cast<uint64_t>(-EFAULT);
}

uint64_t h_probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                          uint64_t) {
  return static_cast<uint64_t>(
      safe_read_str(reinterpret_cast<void *>(dst), size,
                    reinterpret_cast<const void *>(src)));
}

// Stack slots read through a window copied a kilobyte at a time: a walk
// reads two words per frame, mostly close together, and each fault-safe
// copy has a fixed cost (rep movsb's start-up) that dwarfs eight bytes.
class StackWindow {
public:
  // `floor`: the probe's stack pointer; nothing below it is read.
  StackWindow(const SafeReader &reader, uint64_t floor)
      : reader_(reader), floor_(floor) {}
  bool read(void *dst, uint64_t addr, size_t n) {
    if (n > sizeof buf_)
      return false;
    if (addr < base_ || addr - base_ > len_ || len_ - (addr - base_) < n) {
      // A frame's saved rbp is read just below its return address, after
      // it: a window starting a little lower serves both.
      uint64_t from = addr;
      if (addr >= floor_)
        from -= addr - floor_ < kBelow ? addr - floor_ : kBelow;
      len_ =
          reader_.copy(buf_, reinterpret_cast<const void *>(from), sizeof buf_);
      base_ = from;
      if (len_ < addr - from || len_ - (addr - from) < n)
        return false;
    }
    // Words out of the window by plain moves (constant sizes: no call to
    // memcpy, and no rep movsb start-up per word).
    const uint8_t *from = buf_ + (addr - base_);
    if (n == 8)
      __builtin_memcpy(dst, from, 8);
    else if (n == 16)
      __builtin_memcpy(dst, from, 16);
    else
      probe_safe::copy_bytes(dst, from, n);
    return true;
  }

private:
  static constexpr uint64_t kBelow = 64;
  const SafeReader &reader_;
  uint64_t floor_;
  uint64_t base_ = 0;
  size_t len_ = 0;
  alignas(16) uint8_t buf_[1024];
};

uint64_t h_get_stack(uint64_t ctx, uint64_t buf, uint64_t size, uint64_t flags,
                     uint64_t) {
  auto *out = reinterpret_cast<uint64_t *>(buf);
  uint64_t max = size / 8;
  if (!(flags & BPF_F_USER_STACK) || ctx == 0 || max == 0)
    return 0;
  const auto *regs = reinterpret_cast<const abi::PtRegsLayout *>(ctx);
  if (regs->rip == 0)
    return 0;
  const SafeReader reader;
  // With the loaded modules' CFI rows (unwind/loaded_modules.h, built by
  // the agent when a program walks stacks): CFI where a module has rows,
  // the rbp chain elsewhere.
  unwind::ModuleSet mods = unwind::loaded_modules();
  if (mods.count > 0) {
    unwind::UnwindRegs r{regs->rip, regs->rsp, regs->rbp};
    StackWindow window(reader, regs->rsp);
    auto read = [&](void *dst, uint64_t addr, size_t n) {
      return window.read(dst, addr, n);
    };
    return 8 * unwind::walk_stack(mods.modules, mods.count, r, out, max, read);
  }
  // Without rows, by frame pointers, like the kernel's user unwinder: the
  // probed ip, then the return address of each frame on the rbp chain.
  uint64_t n = 0;
  out[n++] = regs->rip;
  // At a function's first instruction the frame is not set up yet: rbp is
  // still the caller's, so its return address is only at [rsp]. Take it
  // from there (as Linux does for uprobes at function entry), then walk on.
  const auto *host = reinterpret_cast<const abi::HostProbeCtx *>(ctx);
  if (host->func_ip != 0 && regs->rip == host->func_ip && n < max) {
    uint64_t ret = 0;
    if (reader.copy(&ret, reinterpret_cast<const void *>(regs->rsp),
                    sizeof ret) == sizeof ret &&
        ret != 0)
      out[n++] = ret;
  }
  uint64_t fp = regs->rbp;
  while (n < max && fp != 0 && (fp & 7) == 0) {
    uint64_t frame[2];
    if (reader.copy(frame, reinterpret_cast<const void *>(fp), sizeof frame) !=
        sizeof frame)
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

// write_user(): len bytes of the program's memory written at dst, fault-
// safe; 0 when all were, as the kernel's bpf_probe_write_user.
uint64_t h_probe_write_user(uint64_t dst, uint64_t src, uint64_t len, uint64_t,
                            uint64_t) {
  if (len == 0)
    return 0;
  const SafeReader writer;
  return writer.write(reinterpret_cast<void *>(dst),
                      reinterpret_cast<const void *>(src), len) == len
             ? 0
             : static_cast<uint64_t>(-EFAULT);
}

uint64_t h_send_signal(uint64_t sig, uint64_t, uint64_t, uint64_t, uint64_t) {
  return static_cast<uint64_t>(signal_self(static_cast<int>(sig)));
}

uint64_t h_cgroup_id(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return current_cgroup_id();
}

uint64_t h_current_task(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return 0;
}

constexpr maps::HelperEntry kHelpers[] = {
    {BPF_FUNC_probe_read, "probe_read", h_probe_read},
    {BPF_FUNC_ktime_get_ns, "ktime_get_ns", h_ktime_get_ns},
    {BPF_FUNC_get_prandom_u32, "get_prandom_u32", h_prandom},
    {BPF_FUNC_get_smp_processor_id, "get_smp_processor_id", h_cpu},
    {BPF_FUNC_get_current_pid_tgid, "get_current_pid_tgid", h_pid_tgid},
    {BPF_FUNC_get_current_uid_gid, "get_current_uid_gid", h_uid_gid},
    {BPF_FUNC_get_current_comm, "get_current_comm", h_comm},
    {abi::kHelperRelatedComm, "ubt_related_comm", h_related_comm},
    {abi::kHelperPpid, "ubt_ppid", h_ppid},
    {abi::kHelperInitialPidTgid, "ubt_initial_pid_tgid", h_initial_pid_tgid},
    {BPF_FUNC_get_current_task, "get_current_task", h_current_task},
    {BPF_FUNC_get_numa_node_id, "get_numa_node_id", h_numa},
    {BPF_FUNC_probe_read_str, "probe_read_str", h_probe_read_str},
    {BPF_FUNC_get_current_cgroup_id, "get_current_cgroup_id", h_cgroup_id},
    {BPF_FUNC_get_stack, "get_stack", h_get_stack},
    {BPF_FUNC_send_signal, "send_signal", h_send_signal},
    {BPF_FUNC_probe_write_user, "probe_write_user", h_probe_write_user},
    {BPF_FUNC_probe_read_user, "probe_read_user", h_probe_read},
    {BPF_FUNC_probe_read_kernel, "probe_read_kernel", h_probe_read_kernel},
    {BPF_FUNC_probe_read_user_str, "probe_read_user_str", h_probe_read_str},
    {BPF_FUNC_probe_read_kernel_str, "probe_read_kernel_str",
     h_probe_read_kernel},
    {BPF_FUNC_jiffies64, "jiffies64", h_jiffies64},
    {BPF_FUNC_ktime_get_boot_ns, "ktime_get_boot_ns", h_ktime_get_boot_ns},
    {BPF_FUNC_ktime_get_tai_ns, "ktime_get_tai_ns", h_ktime_get_tai_ns},
};

} // namespace

long safe_read(void *dst, uint64_t size, const void *src) {
  if (size == 0)
    return 0;
  if (safe_copy(dst, src, size) == size)
    return 0;
  probe_safe::fill_bytes(dst, 0, size);
  return -EFAULT;
}

long safe_read_str(void *dst, uint64_t size, const void *src) {
  auto *out = static_cast<char *>(dst);
  if (size == 0)
    return -EINVAL;
  // Up to the NUL (the string may end right before an unreadable page),
  // cut to size - 1 bytes and terminated. Like the kernel's
  // bpf_probe_read_user_str: unreadable memory before the NUL (or before
  // size bytes) is a failed read, with dst zeroed.
  size_t n = safe_copy_string(out, static_cast<const char *>(src), size);
  size_t len = probe_safe::bounded_length(out, n < size ? n : size - 1);
  if (len == n && n < size) {
    probe_safe::fill_bytes(out, 0, size);
    return -EFAULT;
  }
  out[len] = 0;
  return static_cast<long>(len + 1);
}

std::span<const maps::HelperEntry> host_helpers() {
  return kHelpers;
}

} // namespace ubtrace::runtime::helpers
