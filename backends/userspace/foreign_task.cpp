// Probes run for another thread (see foreign_task.h).
#include "backends/userspace/foreign_task.h"

#include "runtime/abi.h"
#include "runtime/file_text.h"
#include "runtime/helpers/process_facts.h"
#include "runtime/proc_stat.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <linux/bpf.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <unordered_map>

namespace ubtrace::backends {

void TaskNames::name(uint32_t pid, uint32_t tid, uint32_t cpu, char out[16]) {
  std::memset(out, 0, 16);
  std::string name;
  if (tid == 0) { // the idle task
    name = "swapper/" + std::to_string(cpu);
  } else if (auto text = read_file("/proc/" + std::to_string(pid) + "/task/" +
                                   std::to_string(tid) + "/comm")) {
    name = *text;
    while (!name.empty() && name.back() == '\n')
      name.pop_back();
  }
  std::memcpy(out, name.data(), std::min<size_t>(name.size(), 15));
}

namespace {

std::atomic<uint64_t> g_reads_gone{0};
std::atomic<uint64_t> g_reads_unkept{0};

// What /proc says of a process, read once when a probe asks.
struct ProcessFacts {
  std::optional<std::pair<uint32_t, uint32_t>> uid_gid;
  std::optional<pid_t> ppid;
  std::optional<uint64_t> cgroup;
};
// By pid, or by pin key (above 2^32) for a pinned process.
std::unordered_map<uint64_t, ProcessFacts> g_facts;

struct ProcNames final : TaskNames {};
ProcNames g_proc_names;

// The task the running program answers for: a helper gets only its five
// arguments. Set around each run, on the CLI's thread.
const ForeignTask *g_task = nullptr;

const ForeignTask &task() {
  return *g_task;
}

bool pin_gone() {
  return task().pin && task().pin->pidfd < 0;
}

// Whether the pinned process has ended (pidfd_ended).
bool pin_ended() {
  return task().pin && pidfd_ended(task().pin->pidfd);
}

// The task's process's facts, kept under its pin if it has one; null
// where its process is gone.
ProcessFacts *facts_of() {
  if (task().pid == 0 || pin_gone())
    return nullptr;
  if (g_facts.size() > 65536)
    g_facts.clear();
  return &g_facts[task().pin ? task().pin->key : task().pid];
}

uint64_t f_pid_tgid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return (uint64_t(task().pid) << 32) | task().tid;
}

uint64_t f_cpu(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return task().cpu;
}

uint64_t f_time(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return task().time;
}

uint64_t put_name(uint64_t buf, uint64_t size, const char *name) {
  if (size == 0)
    return static_cast<uint64_t>(-EINVAL);
  size_t n = std::min<size_t>(strnlen(name, 15), size - 1);
  auto *dst = reinterpret_cast<char *>(buf);
  std::memcpy(dst, name, n);
  std::memset(dst + n, 0, size - n);
  return 0;
}

uint64_t put_comm(uint64_t buf, uint64_t size, uint32_t pid, uint32_t tid) {
  char name[16];
  (task().names ? task().names : &g_proc_names)
      ->name(pid, tid, task().cpu, name);
  return put_name(buf, size, name);
}

uint64_t f_comm(uint64_t buf, uint64_t size, uint64_t, uint64_t, uint64_t) {
  if (task().comm)
    return put_name(buf, size, task().comm);
  return put_comm(buf, size, task().pid, task().tid);
}

pid_t parent() {
  ProcessFacts *f = facts_of();
  if (!f)
    return 0;
  if (!f->ppid) {
    auto st = read_proc_stat(pid_t(task().pid));
    if (pin_ended()) // /proc/PID may have been another's
      return 0;
    f->ppid = st ? st->ppid : 0;
  }
  return *f->ppid;
}

uint64_t f_ppid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return uint64_t(parent());
}

uint64_t f_related_comm(uint64_t buf, uint64_t size, uint64_t which, uint64_t,
                        uint64_t) {
  if (which == abi::kRelatedLeader)
    return put_comm(buf, size, task().pid, task().pid);
  pid_t p = parent();
  if (p <= 0)
    return put_name(buf, size, "");
  return put_comm(buf, size, uint32_t(p), uint32_t(p));
}

uint64_t f_uid_gid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  ProcessFacts *f = facts_of();
  if (!f)
    return 0;
  if (!f->uid_gid) {
    // Status's Uid: and Gid: lines: real, effective, saved, filesystem;
    // the helper's are the real ones.
    uint32_t uid = 0, gid = 0;
    if (auto text =
            read_file("/proc/" + std::to_string(task().pid) + "/status")) {
      if (size_t at = text->find("\nUid:"); at != std::string::npos)
        uid = uint32_t(std::strtoul(text->c_str() + at + 5, nullptr, 10));
      if (size_t at = text->find("\nGid:"); at != std::string::npos)
        gid = uint32_t(std::strtoul(text->c_str() + at + 5, nullptr, 10));
    }
    if (pin_ended()) // /proc/PID may have been another's
      return 0;
    f->uid_gid = {uid, gid};
  }
  return (uint64_t(f->uid_gid->second) << 32) | f->uid_gid->first;
}

uint64_t f_cgroup_id(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  ProcessFacts *f = facts_of();
  if (!f)
    return 0;
  if (!f->cgroup) {
    uint64_t id = runtime::helpers::cgroup_id_of(std::to_string(task().pid));
    if (pin_ended()) // /proc/PID may have been another's
      return 0;
    f->cgroup = id;
  }
  return *f->cgroup;
}

// Reads the task's memory; how many bytes could be. A pinned process's
// through its /proc/PID/mem, which reads the image pinned or nothing (0:
// it ended or exec'd); else by pid, which for a pin counts only if the
// process outlived the read.
size_t read_remote(void *dst, uint64_t size, uint64_t src) {
  if (size == 0)
    return 0;
  if (task().kept) {
    for (const auto &k : *task().kept)
      if (src >= k.address && src - k.address < k.bytes.size()) {
        size_t n = std::min<uint64_t>(size, k.bytes.size() - (src - k.address));
        std::memcpy(dst, k.bytes.data() + (src - k.address), n);
        return n;
      }
    g_reads_unkept.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  if (task().memory <= 0)
    return 0;
  const ProcessPin *pin = task().pin;
  if (pin && pin->image_gone) {
    g_reads_gone.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  if (pin && pin->memfd >= 0) {
    ssize_t n = src > uint64_t(INT64_MAX)
                    ? -1
                    : pread(pin->memfd, dst, size, off_t(src));
    if (n == 0)
      g_reads_gone.fetch_add(1, std::memory_order_relaxed);
    return n > 0 ? size_t(n) : 0;
  }
  if (pin_gone()) {
    g_reads_gone.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  iovec local{dst, size};
  iovec remote{reinterpret_cast<void *>(src), size};
  ssize_t n = process_vm_readv(task().memory, &local, 1, &remote, 1, 0);
  if ((n < 0 && errno == ESRCH) || (n > 0 && pin_ended())) {
    g_reads_gone.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  return n > 0 ? size_t(n) : 0;
}

uint64_t f_probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                      uint64_t) {
  if (size == 0)
    return 0;
  if (read_remote(reinterpret_cast<void *>(dst), size, src) == size)
    return 0;
  std::memset(reinterpret_cast<void *>(dst), 0, size);
  return static_cast<uint64_t>(-EFAULT);
}

uint64_t f_probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                          uint64_t) {
  auto *out = reinterpret_cast<char *>(dst);
  if (size == 0)
    return static_cast<uint64_t>(-EINVAL);
  // As the kernel's: up to the NUL, cut to size - 1 bytes; nothing
  // readable before either is a failed read. A string may end right
  // before an unreadable page: read page by page.
  size_t n = 0;
  while (n < size) {
    uint64_t page_left = 4096 - ((src + n) & 4095);
    size_t want = std::min<uint64_t>(size - n, page_left);
    size_t got = read_remote(out + n, want, src + n);
    n += got;
    if (got < want || std::memchr(out + n - got, 0, got))
      break;
  }
  size_t len = strnlen(out, std::min(n, size_t(size - 1)));
  if (len == n && n < size) {
    std::memset(out, 0, size);
    return static_cast<uint64_t>(-EFAULT);
  }
  out[len] = 0;
  return len + 1;
}

uint64_t f_probe_write_user(uint64_t dst, uint64_t src, uint64_t len, uint64_t,
                            uint64_t) {
  if (len == 0)
    return 0;
  // A pinned process must still be the one the number names (left: the
  // microseconds between this check and the write).
  if (task().memory <= 0 || pin_ended() ||
      (task().pin && task().pin->image_gone))
    return static_cast<uint64_t>(-EFAULT);
  iovec local{reinterpret_cast<void *>(src), len};
  iovec remote{reinterpret_cast<void *>(dst), len};
  ssize_t n = process_vm_writev(task().memory, &local, 1, &remote, 1, 0);
  return n == ssize_t(len) ? 0 : static_cast<uint64_t>(-EFAULT);
}

uint64_t f_get_stack(uint64_t, uint64_t buf, uint64_t size, uint64_t flags,
                     uint64_t) {
  if (!(flags & BPF_F_USER_STACK))
    return 0;
  size_t n = std::min<size_t>(task().chain_len, size / 8);
  if (n)
    std::memcpy(reinterpret_cast<void *>(buf), task().chain, 8 * n);
  return 8 * n;
}

uint64_t f_send_signal(uint64_t sig, uint64_t, uint64_t, uint64_t, uint64_t) {
  if (task().pid == 0)
    return static_cast<uint64_t>(-EINVAL);
  if (pin_gone())
    return static_cast<uint64_t>(-ESRCH);
  // Through the pin, the signal reaches that process or none.
  long r = task().pin ? syscall(SYS_pidfd_send_signal, task().pin->pidfd,
                                int(sig), nullptr, 0)
                      : kill(pid_t(task().pid), int(sig));
  return r == 0 ? 0 : static_cast<uint64_t>(-errno);
}

} // namespace

namespace {

const vm::HelperImpls &foreign_helper_impls() {
  static const vm::HelperImpls impls = [] {
    vm::HelperImpls h = host_helper_impls();
    const std::pair<int32_t, vm::HelperFn> overrides[] = {
        {BPF_FUNC_get_current_pid_tgid, f_pid_tgid},
        {abi::kHelperInitialPidTgid, f_pid_tgid},
        {BPF_FUNC_get_smp_processor_id, f_cpu},
        {BPF_FUNC_ktime_get_ns, f_time},
        {BPF_FUNC_get_current_comm, f_comm},
        {abi::kHelperRelatedComm, f_related_comm},
        {abi::kHelperPpid, f_ppid},
        {BPF_FUNC_get_current_uid_gid, f_uid_gid},
        {BPF_FUNC_get_current_cgroup_id, f_cgroup_id},
        {BPF_FUNC_probe_read, f_probe_read},
        {BPF_FUNC_probe_read_user, f_probe_read},
        {BPF_FUNC_probe_read_str, f_probe_read_str},
        {BPF_FUNC_probe_read_user_str, f_probe_read_str},
        {BPF_FUNC_get_stack, f_get_stack},
        {BPF_FUNC_send_signal, f_send_signal},
        {BPF_FUNC_probe_write_user, f_probe_write_user},
    };
    for (const auto &[id, fn] : overrides)
      h.set(id, fn);
    return h;
  }();
  return impls;
}

} // namespace

bool acts_on_process(const vm::BoundProgram &program) {
  // The helpers above that read, write, signal or ask /proc of the
  // task's process (a pin's users).
  static constexpr int32_t kActing[] = {
      BPF_FUNC_probe_read,
      BPF_FUNC_probe_read_user,
      BPF_FUNC_probe_read_str,
      BPF_FUNC_probe_read_user_str,
      BPF_FUNC_probe_write_user,
      BPF_FUNC_send_signal,
      BPF_FUNC_get_current_uid_gid,
      BPF_FUNC_get_current_cgroup_id,
      abi::kHelperPpid,
      abi::kHelperRelatedComm,
  };
  return std::any_of(std::begin(kActing), std::end(kActing),
                     [&](int32_t id) { return program.calls_helper(id); });
}

Result<vm::BoundProgram> bind_foreign(const ProgramSet &programs,
                                      const std::string &section) {
  const vm::VerifiedProgram *verified = programs.verified(section);
  if (!verified)
    return make_error("BUG: no program in section " + section);
  return vm::bind_program(*verified, programs.bindings(),
                          foreign_helper_impls());
}

vm::RunResult run_for(const ForeignTask &t, const vm::BoundProgram &program,
                      void *ctx) {
  g_task = &t;
  vm::RunResult r = vm::run(program, ctx);
  g_task = nullptr;
  return r;
}

void forget_process(uint32_t pid) {
  g_facts.erase(pid);
}

bool pidfd_ended(int pidfd) {
  if (pidfd < 0)
    return true;
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

void forget_pinned(uint64_t key) {
  g_facts.erase(key);
}

uint64_t foreign_reads_gone() {
  return g_reads_gone.load(std::memory_order_relaxed);
}

uint64_t foreign_reads_unkept() {
  return g_reads_unkept.load(std::memory_order_relaxed);
}

void fill_syscall_ctx(abi::HostProbeCtx &ctx, const runtime::SyscallSite &site,
                      const uint64_t args[6], int64_t nr, int64_t ret) {
  ctx.regs.rdi = args[0];
  ctx.regs.rsi = args[1];
  ctx.regs.rdx = args[2];
  ctx.regs.r10 = args[3];
  ctx.regs.r8 = args[4];
  ctx.regs.r9 = args[5];
  ctx.regs.orig_rax = uint64_t(nr);
  ctx.regs.rax = uint64_t(ret);
  for (size_t k = 0; k < std::size(ctx.usdt_args); k++) {
    int8_t from = k < site.sources.size() ? site.sources[k] : -1;
    ctx.usdt_args[k] = from >= 0 && from < 6 ? args[from]
                       : from == 6           ? uint64_t(nr)
                       : from == 7           ? uint64_t(ret)
                                             : 0;
  }
}

} // namespace ubtrace::backends
