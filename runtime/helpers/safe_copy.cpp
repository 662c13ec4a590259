#include "runtime/helpers/safe_copy.h"

#include "runtime/helpers/signal_chain.h"
#include "runtime/probe_safe.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/uio.h>

// The copy routine: returns 0 in eax, or 1 when the rep movsb faulted (the
// handler resumes at the fixup). Its only instruction that touches the
// source is at ubt_fault_copy_insn.
extern "C" int ubt_fault_copy(void *dst, const void *src, size_t n);
extern "C" char ubt_fault_copy_insn[], ubt_fault_copy_fixup[];
__asm__(R"(
  .text
  .p2align 4
  .globl ubt_fault_copy
  .hidden ubt_fault_copy
  .type ubt_fault_copy, @function
ubt_fault_copy:
  movq %rdx, %rcx
  .globl ubt_fault_copy_insn
  .hidden ubt_fault_copy_insn
ubt_fault_copy_insn:
  rep movsb
  xorl %eax, %eax
  ret
  .globl ubt_fault_copy_fixup
  .hidden ubt_fault_copy_fixup
ubt_fault_copy_fixup:
  movl $1, %eax
  ret
  .size ubt_fault_copy, .-ubt_fault_copy
)");

namespace ubtrace::runtime::helpers {
namespace {

constexpr uint64_t kPage = 4096;
// Above this, no user address (x86-64, 4-level and 5-level paging alike
// refuse it here; the kernel half faults anyway).
constexpr uint64_t kUserTop = 0x00ff'ffff'ffff'f000ull;

void on_fault(int sig, siginfo_t *info, void *context);

ChainedSignal g_segv{SIGSEGV, on_fault};
ChainedSignal g_bus{SIGBUS, on_fault};

std::atomic<bool> g_armed{false};
std::atomic<bool> g_interposed{false};
std::atomic<bool> g_sandboxed{false};
std::atomic<uint64_t> g_refusals{0};

void on_fault(int sig, siginfo_t *info, void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *g = uc->uc_mcontext.gregs;
  // Raised by the kernel (not sent) at our copy instruction: ours.
  if (info->si_code > 0 &&
      g[REG_RIP] == reinterpret_cast<greg_t>(ubt_fault_copy_insn)) {
    g[REG_RIP] = reinterpret_cast<greg_t>(ubt_fault_copy_fixup);
    return;
  }
  pass_on(sig == SIGSEGV ? g_segv : g_bus, info, context, /*fault=*/true);
}

constexpr uint64_t kFaultSignals =
    (uint64_t{1} << (SIGSEGV - 1)) | (uint64_t{1} << (SIGBUS - 1));

// Whether a copy that faults is caught by our handlers (ours are the
// process's, re-installed if the program replaced them without the
// preload). Sets `unblock` when this thread blocks SIGSEGV or SIGBUS: the
// copy must unblock them meanwhile (the kernel would kill it).
bool faults_are_caught(bool &unblock) {
  if (!g_armed.load(std::memory_order_acquire))
    return false;
  uint64_t blocked = 0;
  if (probe_safe::raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0,
                              reinterpret_cast<long>(&blocked), 8) != 0)
    return false;
  unblock = (blocked & kFaultSignals) != 0;
  if (g_interposed.load(std::memory_order_acquire))
    return true;
  return ensure_first(g_segv) && ensure_first(g_bus);
}

long set_fault_signals(int how) {
  return probe_safe::raw_syscall(SYS_rt_sigprocmask, how,
                                 reinterpret_cast<long>(&kFaultSignals), 0, 8);
}

bool seccomp_active() {
  FILE *f = fopen("/proc/self/status", "re");
  if (!f)
    return true; // cannot tell: assume the worst
  char line[256];
  bool active = false;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Seccomp:", 8) == 0)
      active = line[strspn(line + 8, " \t") + 8] != '0';
  fclose(f);
  return active;
}

enum class Mode { Fault, Kernel, Refused };

// How this helper call reads: decided once (nothing the program does can
// change this thread's mask or handlers while the probe runs).
Mode choose_mode(bool &unblock) {
  if (faults_are_caught(unblock))
    return Mode::Fault;
  if (!g_sandboxed.load(std::memory_order_acquire))
    return Mode::Kernel;
  g_refusals.fetch_add(1, std::memory_order_relaxed);
  return Mode::Refused;
}

// One page's worth (the chunk never crosses a page of the side that may
// fault: src when reading, dst when writing): all or nothing.
bool copy_chunk(Mode mode, void *dst, uint64_t src, size_t n,
                bool writing = false) {
  switch (mode) {
  case Mode::Fault: // the copy instruction faults on either side alike
    return ubt_fault_copy(dst, reinterpret_cast<const void *>(src), n) == 0;
  case Mode::Kernel: {
    // The side that may fault is the "remote" one, in this process.
    void *ours = writing ? reinterpret_cast<void *>(src) : dst;
    void *theirs = writing ? dst : reinterpret_cast<void *>(src);
    struct iovec local = {ours, n};
    struct iovec remote = {theirs, n};
    long pid = probe_safe::raw_syscall(SYS_getpid);
    return probe_safe::raw_syscall(
               writing ? SYS_process_vm_writev : SYS_process_vm_readv, pid,
               reinterpret_cast<long>(&local), 1,
               reinterpret_cast<long>(&remote), 1, 0) == static_cast<long>(n);
  }
  case Mode::Refused:
    return false;
  }
  return false;
}

size_t chunk_at(uint64_t src, size_t left) {
  size_t to_page = kPage - (src & (kPage - 1));
  return left < to_page ? left : to_page;
}

bool plausible(uint64_t src, size_t n) {
  return src != 0 && src < kUserTop && n <= kUserTop - src;
}

} // namespace

bool arm_safe_copy() {
  if (seccomp_active())
    g_sandboxed.store(true, std::memory_order_release);
  bool ok = install_first(g_segv).ok() && install_first(g_bus).ok();
  g_armed.store(ok, std::memory_order_release);
  return ok;
}

void set_signals_interposed() {
  g_interposed.store(true, std::memory_order_release);
}

void set_sandboxed() {
  g_sandboxed.store(true, std::memory_order_release);
}

bool sandboxed() {
  return g_sandboxed.load(std::memory_order_acquire);
}

bool signals_interposed() {
  return g_interposed.load(std::memory_order_acquire);
}

SafeReader::SafeReader() {
  bool unblock = false;
  Mode mode = choose_mode(unblock);
  // This thread blocks SIGSEGV or SIGBUS: unblocked for this call's copies
  // (a fault with them blocked would kill it), blocked again after.
  if (mode == Mode::Fault && unblock) {
    if (set_fault_signals(SIG_UNBLOCK) == 0)
      reblock_ = true;
    else
      mode = Mode::Refused;
  }
  mode_ = static_cast<int>(mode);
}

SafeReader::~SafeReader() {
  if (reblock_)
    set_fault_signals(SIG_BLOCK);
}

size_t SafeReader::copy(void *dst, const void *src, size_t n) const {
  auto s = reinterpret_cast<uint64_t>(src);
  if (n == 0 || !plausible(s, n))
    return 0;
  auto mode = static_cast<Mode>(mode_);
  size_t done = 0;
  while (done < n) {
    size_t chunk = chunk_at(s + done, n - done);
    if (!copy_chunk(mode, static_cast<char *>(dst) + done, s + done, chunk))
      break;
    done += chunk;
  }
  return done;
}

size_t SafeReader::copy_string(char *dst, const char *src, size_t max) const {
  auto s = reinterpret_cast<uint64_t>(src);
  if (max == 0 || s == 0 || s >= kUserTop)
    return 0;
  if (max > kUserTop - s)
    max = kUserTop - s;
  auto mode = static_cast<Mode>(mode_);
  size_t done = 0;
  while (done < max) {
    size_t chunk = chunk_at(s + done, max - done);
    if (!copy_chunk(mode, dst + done, s + done, chunk))
      break;
    size_t len = probe_safe::bounded_length(dst + done, chunk);
    if (len < chunk)
      return done + len + 1; // the NUL, which was copied
    done += chunk;
  }
  return done;
}

size_t SafeReader::write(void *dst, const void *src, size_t n) const {
  auto d = reinterpret_cast<uint64_t>(dst);
  if (n == 0 || !plausible(d, n))
    return 0;
  auto mode = static_cast<Mode>(mode_);
  size_t done = 0;
  while (done < n) {
    size_t chunk = chunk_at(d + done, n - done);
    if (!copy_chunk(mode, reinterpret_cast<void *>(d + done),
                    reinterpret_cast<uint64_t>(src) + done, chunk, true))
      break;
    done += chunk;
  }
  return done;
}

size_t safe_copy(void *dst, const void *src, size_t n) {
  return SafeReader().copy(dst, src, n);
}

size_t safe_copy_string(char *dst, const char *src, size_t max) {
  return SafeReader().copy_string(dst, src, max);
}

uint64_t safe_copy_refusals() {
  return g_refusals.load(std::memory_order_relaxed);
}

bool filter_fault_sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old) {
  ChainedSignal *s = sig == SIGSEGV  ? &g_segv
                     : sig == SIGBUS ? &g_bus
                                     : nullptr;
  return s && filter_sigaction(*s, act, old);
}

} // namespace ubtrace::runtime::helpers
