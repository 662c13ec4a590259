#include "runtime/agent/syscalls.h"

#include "runtime/agent/profile.h"
#include "runtime/agent/sandbox_notice.h"
#include "runtime/agent/syscall_signals.h"
#include "runtime/agent/syscalls_state.h"
#include "runtime/helpers/host_helpers.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/helpers/signal_chain.h"
#include "runtime/helpers/thread_id_reset.h"
#include "runtime/helpers/thread_identity.h"
#include "runtime/hook/decoder.h"
#include "runtime/hook/hook.h"
#include "runtime/hook/site_bindings.h"
#include "runtime/hook/trap_handler.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <unordered_set>
#include <vector>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif

// A new task's first step (ubt_syscalls_clone_return): dispatch on.
extern "C" void ubt_syscalls_child();

// The stubs' way back (below), in the parent and in the child, with the
// call's number pushed above its return address: a pt_regs frame of the
// registers as the call left them (rip the program's return address, the
// stack pointer the program's), with the tail room a probe's context uses
// above it, for ubt_syscalls_clone_return (syscall_fast.cpp). Every
// register and the flags come back as they were.
extern "C" void ubt_syscalls_clone_return_entry();
__asm__(R"(
  .text
  .p2align 4
  .hidden ubt_syscalls_clone_return_entry
  .globl ubt_syscalls_clone_return_entry
  .type ubt_syscalls_clone_return_entry, @function
ubt_syscalls_clone_return_entry:
  sub $128, %rsp
  push $0
  push %rax
  pushfq
  push $0
  push $0
  push 176(%rsp)
  push %rdi
  push %rsi
  push %rdx
  push %rcx
  push %rax
  push %r8
  push %r9
  push %r10
  push %r11
  push %rbx
  push %rbp
  push %r12
  push %r13
  push %r14
  push %r15
  lea 440(%rsp), %rax
  mov %rax, 152(%rsp)
  mov 296(%rsp), %rax
  mov 22(%rax), %rax
  mov %rax, 128(%rsp)
  mov 80(%rsp), %rax
  mov %rsp, %rdi
  mov %rsp, %rbx
  and $-16, %rsp
  call ubt_syscalls_clone_return
  mov %rbx, %rsp
  pop %r15
  pop %r14
  pop %r13
  pop %r12
  pop %rbp
  pop %rbx
  pop %r11
  pop %r10
  pop %r9
  pop %r8
  pop %rax
  pop %rcx
  pop %rdx
  pop %rsi
  pop %rdi
  add $24, %rsp
  popfq
  add $144, %rsp
  ret
  .size ubt_syscalls_clone_return_entry, .-ubt_syscalls_clone_return_entry
)");

namespace ubtrace::agent::syscalls {

namespace state {
bool g_active = false;
char *g_selector = nullptr;
char *g_enabled = nullptr;
RawSyscall g_raw = nullptr;
uint64_t g_want[2][kMaxNr / 64];
bool g_want_all[2];
uint64_t g_child_exits_unseen;
long g_tid_offset = -1;
} // namespace state

namespace {

using namespace state;
constexpr size_t kPage = 4096;
constexpr size_t kCodePages = 3; // fixed code, then two pages of stubs
constexpr size_t kStubSize = 64;
constexpr uint32_t kMaxStubs = (kCodePages - 1) * kPage / kStubSize;

// The exempt code's first page: rt_sigreturn, then a system call taking
// its number and six arguments as a C function would.
constexpr uint8_t kFixedCode[] = {
    // mov rax, 15 (rt_sigreturn); syscall: glibc's __restore_rt, byte for
    // byte, which is how unwinders recognise a signal frame (a program's
    // handler that our handler chains to may throw through it).
    0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xcc,
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x48, 0x89, 0xf8, // 16: mov rax, rdi
    0x48, 0x89, 0xf7,                                     // mov rdi, rsi
    0x48, 0x89, 0xd6,                                     // mov rsi, rdx
    0x48, 0x89, 0xca,                                     // mov rdx, rcx
    0x4d, 0x89, 0xc2,                                     // mov r10, r8
    0x4d, 0x89, 0xc8,                                     // mov r8, r9
    0x4c, 0x8b, 0x4c, 0x24, 0x08,                         // mov r9, [rsp+8]
    0x0f, 0x05,                                           // syscall
    0xc3,                                                 // ret
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, // to 48: the rewritten sites'
    0x0f, 0x05, 0xc3,                   // direct path: syscall; ret
};
constexpr size_t kSyscallAt = 16;
constexpr size_t kDirectAt = 48;
static_assert(sizeof kFixedCode == kDirectAt + 3);

// Shared by a process and its forked children (the memfd is shared): the
// stubs' keys and the lock that guards making one.
struct Control {
  std::atomic<uint32_t> lock;
  std::atomic<uint32_t> count;
  // The address after the program's syscall, its number in the top 16
  // bits.
  uint64_t keys[kMaxStubs];
};

uint8_t *g_exec = nullptr;    // the exempt range (read + execute)
uint8_t *g_write = nullptr;   // the same pages, writable, then Control
Control *g_control = nullptr; // in g_write's last page

std::atomic<bool> g_stopped{false};
Handler g_handler = nullptr;
int g_cookie; // its address marks our own enabling signals

std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_untraced{0};
std::atomic<uint64_t> g_refused{0};
std::atomic<bool> g_sandboxed{false};

void on_signal(int sig, siginfo_t *info, void *context);
runtime::helpers::ChainedSignal g_chain{SIGSYS, on_signal};

long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
         long f = 0) {
  return g_raw(nr, a, b, c, d, e, f);
}

int32_t my_tid() {
  return static_cast<int32_t>(raw(SYS_gettid));
}

// Turns dispatch on for the calling thread, its selector at ALLOW.
bool enable_self(int32_t tid) {
  if (tid <= 0 || size_t(tid) >= kMaxTid)
    return false;
  g_selector[tid] = kAllow;
  long rc = raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 1,
                reinterpret_cast<long>(g_exec), kCodePages * kPage,
                reinterpret_cast<long>(&g_selector[tid]));
  if (rc != 0)
    return false;
  g_enabled[tid] = 1;
  t_tid = tid;
  return true;
}

// The thread's selector at ALLOW while the agent's own code runs on it
// (probes, fault-safe reads, libc): its system calls are not the
// program's. The program's calls, made through the exempt range, and its
// signal handlers run at BLOCK, traced.
struct Allowed {
  char *selector;
  char before;
  explicit Allowed(char *s) : selector(s), before(s ? *s : kAllow) {
    if (selector)
      *selector = kAllow;
  }
  ~Allowed() {
    if (selector)
      *selector = before;
  }
};

// OwnCalls scopes open on this thread, and what its selector goes back to
// when the last ends.
__thread uint32_t t_own_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread char t_own_restore __attribute__((tls_model("initial-exec"))) = kAllow;

// This thread's selector, once dispatch is on for it; else null.
char *own_selector() {
  int32_t tid = t_tid;
  if (!g_selector || !g_enabled || tid <= 0 || size_t(tid) >= kMaxTid ||
      !__atomic_load_n(&g_enabled[tid], __ATOMIC_RELAXED))
    return nullptr;
  return &g_selector[tid];
}

// The stub for clone-family call `nr` whose next instruction is `ret`
// (made on first use). Null when none is left. Parent and child come back
// through ubt_syscalls_clone_return_entry: dispatch on in the child, the
// exit probes in both.
uint64_t stub_for(uint64_t ret, int nr) {
  const uint64_t key = ret | (static_cast<uint64_t>(nr) << 48);
  Control &c = *g_control;
  uint32_t n = c.count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (c.keys[i] == key)
      return reinterpret_cast<uint64_t>(g_exec + kPage + i * kStubSize);
  while (c.lock.exchange(1, std::memory_order_acquire))
    __builtin_ia32_pause();
  n = c.count.load(std::memory_order_relaxed);
  uint64_t out = 0;
  for (uint32_t i = 0; i < n && !out; i++)
    if (c.keys[i] == key)
      out = reinterpret_cast<uint64_t>(g_exec + kPage + i * kStubSize);
  if (!out && n < kMaxStubs) {
    uint8_t *w = g_write + kPage + n * kStubSize;
    const uint8_t code[] = {
        0x0f, 0x05,                            // syscall
        0x48, 0x8d, 0x64, 0x24, 0x80,          // lea rsp, [rsp-128]
        0x68, 0,    0,    0,    0,             // push nr
        0xff, 0x15, 0x0e, 0,    0,    0,       // call [entry]
        0x48, 0x8d, 0xa4, 0x24, 0x88, 0, 0, 0, // lea rsp, [rsp+136]
        0xff, 0x25, 0x08, 0,    0,    0,       // jmp [ret]
    };
    static_assert(sizeof code == 0x20);
    __builtin_memcpy(w, code, sizeof code);
    uint32_t imm = static_cast<uint32_t>(nr);
    __builtin_memcpy(w + 0x08, &imm, 4);
    uint64_t entry =
        reinterpret_cast<uint64_t>(&ubt_syscalls_clone_return_entry);
    __builtin_memcpy(w + 0x20, &entry, 8);
    __builtin_memcpy(w + 0x28, &ret, 8);
    c.keys[n] = key;
    c.count.store(n + 1, std::memory_order_release);
    out = reinterpret_cast<uint64_t>(g_exec + kPage + n * kStubSize);
  }
  c.lock.store(0, std::memory_order_release);
  return out;
}

// Signals no mask set through a dispatched call may block: SIGSYS, which
// dispatch delivers, and SIGTRAP and SIGILL, which the hooks' traps raise
// (the kernel kills a thread that takes one it blocks). The preload keeps
// the last two out of masks set through libc (preload_signals.c); here
// that holds for raw calls too, glibc's own among them: a thread on its way
// out blocks every signal, then calls madvise and munmap, whose sites may
// be rewritten (trap bytes) under it.
constexpr uint64_t kKeptDeliverable = (uint64_t{1} << (SIGSYS - 1)) |
                                      (uint64_t{1} << (SIGTRAP - 1)) |
                                      (uint64_t{1} << (SIGILL - 1));

// rt_sigprocmask made on the mask the handler's return restores: the
// thread's mask is set to the program's, the call made (the kernel checks
// and copies), the result read back into the context.
long sigprocmask_in_context(char *selector, ucontext_t *uc, long how, long set,
                            long old, long size) {
  if (size != 8)
    return -EINVAL;
  uint64_t handler_mask = 0, program = 0, result = 0;
  __builtin_memcpy(&program, &uc->uc_sigmask, 8);
  raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&program),
      reinterpret_cast<long>(&handler_mask), 8);
  uint64_t given = 0;
  long set_arg = set;
  Allowed allowed(selector);
  if (set && how != SIG_UNBLOCK &&
      runtime::helpers::safe_read(&given, 8,
                                  reinterpret_cast<const void *>(set)) == 0) {
    given &= ~kKeptDeliverable;
    set_arg = reinterpret_cast<long>(&given);
  }
  long rc = raw(SYS_rt_sigprocmask, how, set_arg, old, 8);
  raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&handler_mask),
      reinterpret_cast<long>(&result), 8);
  __builtin_memcpy(&uc->uc_sigmask, &result, 8);
  return rc;
}

// rt_sigaction with kKeptDeliverable out of the new handler's mask; ours
// stays first on SIGSYS.
long sigaction_stripped(char *selector, long sig, long act, long old,
                        long size) {
  Allowed allowed(selector);
  signals::KernelAction copy;
  bool have = act && size == 8 &&
              runtime::helpers::safe_read(
                  &copy, sizeof copy, reinterpret_cast<const void *>(act)) == 0;
  long rc;
  if (size != 8 || (act && !have)) {
    rc = raw(SYS_rt_sigaction, sig, act, old, size); // the kernel's error
  } else {
    if (have)
      copy.mask &= ~kKeptDeliverable;
    rc = signals::program_sigaction(sig, have ? &copy : nullptr, old);
  }
  if (rc == 0 && sig == SIGSYS && act)
    runtime::helpers::ensure_first(g_chain);
  return rc;
}

} // namespace

void state::run_probes(runtime::hook::PtRegs *regs, void *user) {
  const auto *e = static_cast<const Event *>(user);
  g_handler(regs, e->nr, e->exit);
}

namespace {

// Call sites the dispatch handler served, for the agent's thread to
// rewrite (rewrite_sites): lock-free open addressing, written from the
// handler, entries never removed.
constexpr size_t kNotedSites = 4096; // a power of two
std::atomic<uint64_t> g_noted[kNotedSites];
std::atomic<bool> g_noted_new{false};

void note_site(uint64_t site) {
  size_t h = static_cast<size_t>((site * 0x9e3779b97f4a7c15ull) >> 52);
  for (size_t i = 0; i < 16; i++) {
    std::atomic<uint64_t> &slot = g_noted[(h + i) & (kNotedSites - 1)];
    uint64_t seen = slot.load(std::memory_order_relaxed);
    if (seen == site)
      return;
    if (seen == 0 &&
        (slot.compare_exchange_strong(seen, site, std::memory_order_relaxed) ||
         seen == site)) {
      g_noted_new.store(true, std::memory_order_release);
      return;
    }
  }
}

void probe(char *selector, const greg_t *gregs, int nr, bool exit,
           long result) {
  Allowed allowed(selector);
  struct {
    runtime::hook::PtRegs regs;
    uint8_t tail[runtime::hook::kRegsTailRoom]; // the probe's context
  } frame;
  runtime::hook::regs_from_signal_context(gregs, frame.regs);
  frame.regs.orig_rax = static_cast<uint64_t>(nr);
  frame.regs.rax = static_cast<uint64_t>(exit ? result : -ENOSYS);
  Event e{nr, exit};
  runtime::hook::ubt_hook_dispatch_signal(&frame.regs, run_probes, &e);
}

void dispatch(ucontext_t *uc, char *selector) {
  greg_t *g = uc->uc_mcontext.gregs;
  int nr = static_cast<int>(g[REG_RAX]);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (wanted(nr, false))
    probe(selector, g, nr, false, 0);
  long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX],
               g[REG_R10], g[REG_R8],  g[REG_R9]};
  long rc;
  switch (nr) {
  case SYS_rt_sigreturn:
    // The program's handler returning: its frame is at its rsp.
    g[REG_RIP] = reinterpret_cast<greg_t>(g_exec);
    return;
  case SYS_clone:
  case SYS_clone3:
  case SYS_fork:
  case SYS_vfork:
    if (uint64_t stub = stub_for(static_cast<uint64_t>(g[REG_RIP]), nr)) {
      g[REG_RIP] = static_cast<greg_t>(stub); // rax still holds nr
    } else {
      g_refused.fetch_add(1, std::memory_order_relaxed);
      g[REG_RAX] = -EAGAIN;
    }
    return;
  case SYS_rt_sigprocmask:
    rc = sigprocmask_in_context(selector, uc, a[0], a[1], a[2], a[3]);
    break;
  case SYS_rt_sigaction:
    rc = sigaction_stripped(selector, a[0], a[1], a[2], a[3]);
    break;
  default:
    // A call made outside the exempt range and the rewritten sites'
    // trampolines: its site may be rewritten (not ours: g_exec's).
    if (uint64_t site = static_cast<uint64_t>(g[REG_RIP]) - 2;
        (site < reinterpret_cast<uint64_t>(g_exec) ||
         site >= reinterpret_cast<uint64_t>(g_exec) + kCodePages * kPage))
      note_site(site);
    // A seccomp filter may forbid the calls probes make: told before it
    // is on, as the preload tells of libc's wrappers (sandbox_notice.h).
    int scope = ubt_seccomp_scope(nr, a[0], a[1]);
    if (scope)
      notice_sandbox(scope == 2);
    rc = raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    // It may forbid the calls the handler makes too (gettid,
    // rt_sigprocmask): from now on every system call runs untouched.
    if (rc == 0 && scope) {
      g_sandboxed.store(true, std::memory_order_relaxed);
      stop();
    }
    break;
  }
  g[REG_RAX] = rc;
  if (wanted(nr, true))
    probe(selector, g, nr, true, rc);
}

void on_signal(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  auto *uc = static_cast<ucontext_t *>(context);
  int32_t tid = g_raw ? my_tid() : 0;
  char *selector = tid > 0 && size_t(tid) < kMaxTid && g_enabled[tid]
                       ? &g_selector[tid]
                       : nullptr;
  if (info->si_code == SYS_USER_DISPATCH && selector) {
    t_tid = tid; // after a vfork child wrote its own (syscalls_state.h)
    dispatch(uc, selector);
    errno = saved_errno;
    return;
  }
  if (info->si_code == SI_QUEUE && info->si_value.sival_ptr == &g_cookie &&
      info->si_pid == raw(SYS_getpid)) {
    if (!g_stopped.load(std::memory_order_relaxed) && enable_self(tid)) {
      if (t_own_depth > 0)
        t_own_restore = kBlock; // agent work runs on: traced after it
      else
        g_selector[tid] = kBlock;
    }
    errno = saved_errno;
    return;
  }
  // The program's (a seccomp filter's trap, a kill): its handler runs with
  // our selector at ALLOW, as the program would run it without us.
  Allowed allowed(selector);
  runtime::helpers::pass_on(g_chain, info, context, /*fault=*/false);
  errno = saved_errno;
}

Result<void> map_exempt_code() {
  int fd = static_cast<int>(
      syscall(SYS_memfd_create, "ubtrace-syscalls", 1u /* MFD_CLOEXEC */));
  if (fd < 0)
    return make_error(std::string("memfd_create: ") + strerror(errno));
  size_t size = (kCodePages + 1) * kPage;
  void *w = MAP_FAILED, *x = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size)) == 0) {
    w = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    x = mmap(nullptr, kCodePages * kPage, PROT_READ | PROT_EXEC, MAP_SHARED, fd,
             0);
  }
  int err = errno;
  close(fd);
  if (w == MAP_FAILED || x == MAP_FAILED)
    return make_error(std::string("cannot map the system call stubs: ") +
                      strerror(err));
  g_write = static_cast<uint8_t *>(w);
  g_exec = static_cast<uint8_t *>(x);
  std::memset(g_write, 0xcc, kCodePages * kPage);
  std::memcpy(g_write, kFixedCode, sizeof kFixedCode);
  g_control = reinterpret_cast<Control *>(g_write + kCodePages * kPage);
  g_raw = reinterpret_cast<RawSyscall>(g_exec + kSyscallAt);
  return {};
}

// Handlers the program set before with SIGSYS in their mask would block it
// while they run, and a system call there would kill the thread.
void unblock_in_handlers() {
  for (int sig = 1; sig <= 64; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSYS)
      continue;
    struct {
      uint64_t handler, flags, restorer, mask;
    } a{};
    if (raw(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&a), 8) != 0)
      continue;
    uint64_t bit = kKeptDeliverable;
    if (a.handler > 1 && (a.mask & bit)) {
      a.mask &= ~bit;
      raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(&a), 0, 8);
    }
  }
}

// The bounds of the function holding `pc`, from its FDE in .eh_frame (as
// the unwinder finds it): {0, 0} when none covers it.
struct DwarfEhBases {
  void *tbase, *dbase, *func;
};
extern "C" const void *_Unwind_Find_FDE(void *pc, DwarfEhBases *bases);

uint64_t uleb(const uint8_t *&p, const uint8_t *end) {
  uint64_t v = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  return v;
}

// The size of a pointer in DWARF encoding `enc` (0: not understood).
size_t encoded_size(uint8_t enc) {
  switch (enc & 0x0f) {
  case 0x00: // absptr
  case 0x04: // udata8
  case 0x0c: // sdata8
    return 8;
  case 0x02:
  case 0x0a:
    return 2;
  case 0x03:
  case 0x0b:
    return 4;
  default:
    return 0;
  }
}

} // namespace

runtime::hook::FunctionBounds function_of(uint64_t pc) {
  DwarfEhBases bases{};
  const auto *fde = static_cast<const uint8_t *>(
      _Unwind_Find_FDE(reinterpret_cast<void *>(pc), &bases));
  if (!fde || !bases.func)
    return {};
  uint32_t len, cie_delta;
  std::memcpy(&len, fde, 4);
  std::memcpy(&cie_delta, fde + 4, 4);
  if (len < 8 || len == 0xffffffffu)
    return {};
  const uint8_t *cie = fde + 4 - cie_delta;
  uint32_t cie_len;
  std::memcpy(&cie_len, cie, 4);
  if (cie_len < 8 || cie_len == 0xffffffffu)
    return {};
  const uint8_t *p = cie + 8, *end = cie + 4 + cie_len;
  uint8_t version = *p++;
  const char *aug = reinterpret_cast<const char *>(p);
  size_t aug_len = strnlen(aug, static_cast<size_t>(end - p));
  p += aug_len + 1;
  if (std::strstr(aug, "eh"))
    p += 8;
  uleb(p, end); // code alignment
  uleb(p, end); // data alignment (signed: only skipped)
  if (version == 1)
    p++;
  else
    uleb(p, end);
  uint8_t enc = 0;
  if (aug[0] == 'z') {
    uleb(p, end);
    for (const char *a = aug + 1; *a && p < end; a++) {
      if (*a == 'R') {
        enc = *p++;
      } else if (*a == 'P') {
        size_t n = encoded_size(*p++);
        if (!n)
          return {};
        p += n;
      } else if (*a == 'L') {
        p++;
      } else if (*a != 'S' && *a != 'B') {
        return {};
      }
    }
  }
  size_t n = encoded_size(enc);
  if (!n || p > end || 8 + 2 * n > len + 4)
    return {};
  uint64_t range = 0;
  std::memcpy(&range, fde + 8 + n, n); // little-endian, unsigned
  uint64_t start = reinterpret_cast<uint64_t>(bases.func);
  if (pc < start || pc - start >= range)
    return {};
  return {start, range};
}

namespace {

// The agent thread's view of the noted sites: those it has tried.
std::unordered_set<uint64_t> *g_tried = nullptr;
std::vector<uint64_t> *g_rewritten = nullptr;
// The calls a rewritten site hands to ubt_syscalls_fast (nonzero), by ax;
// the others it makes at once (hook.h, SyscallPath). Probed calls, and
// those the fast path leaves to dispatch (ubt_syscalls_fast's list).
uint8_t g_slow[65536];
std::atomic<uint64_t> g_sites_rewritten{0};
std::atomic<uint64_t> g_sites_kept{0};
constexpr size_t kMaxRewrites = 1024;

} // namespace

size_t rewrite_sites(SiteFacts (*facts)(uint64_t site)) {
  if (!is_active() || !g_noted_new.exchange(false, std::memory_order_acquire))
    return 0;
  if (!g_tried) {
    g_tried = new std::unordered_set<uint64_t>;
    g_rewritten = new std::vector<uint64_t>;
  }
  size_t done = 0;
  for (auto &slot : g_noted) {
    uint64_t site = slot.load(std::memory_order_relaxed);
    if (!site || !g_tried->insert(site).second)
      continue;
    // Code the program may unmap (a library it can dlclose, JIT code) is
    // left to dispatch: a rewrite there could outlive the code.
    SiteFacts known = facts(site);
    runtime::hook::FunctionBounds f;
    bool ok = g_rewritten->size() < kMaxRewrites && known.permanent &&
              (f = function_of(site)).size != 0;
    if (ok) {
      runtime::hook::SyscallPath path;
      path.entry = known.abi_calls && !runtime::hook::code_touches_vector_state(
                                          f.start, f.size)
                       ? &ubt_syscalls_fast_abi
                       : &ubt_syscalls_fast;
      path.slow = g_slow;
      path.direct = reinterpret_cast<uint64_t>(g_exec + kDirectAt);
      // As clone_sites.h's: a site keeps its trampoline from session to
      // session, whichever kind rewrote it first.
      path.tls_word_after = runtime::helpers::thread_id_word_offset();
      ok = bool(runtime::hook::install_syscall_site(site, f, path));
    }
    if (ok) {
      g_rewritten->push_back(site);
      g_sites_rewritten.fetch_add(1, std::memory_order_relaxed);
      done++;
    } else {
      g_sites_kept.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return done;
}

void restore_sites() {
  if (!g_rewritten)
    return;
  for (uint64_t site : *g_rewritten)
    (void)runtime::hook::remove_syscall_site(site);
  g_rewritten->clear();
  // A later session notes and rewrites them again (a note racing with this
  // is lost: its site stays on dispatch then).
  g_tried->clear();
  for (auto &slot : g_noted)
    slot.store(0, std::memory_order_relaxed);
  // A later session wants its own calls: nothing of this one's stays
  // probed (a call still on its way reads either: tracing has stopped).
  for (int exit = 0; exit < 2; exit++) {
    __atomic_store_n(&g_want_all[exit], false, __ATOMIC_RELAXED);
    for (auto &word : g_want[exit])
      __atomic_store_n(&word, uint64_t{0}, __ATOMIC_RELAXED);
  }
  for (size_t nr = 0; nr < sizeof g_slow; nr++)
    __atomic_store_n(&g_slow[nr], uint8_t{dispatch_only(int(nr))},
                     __ATOMIC_RELAXED);
}

// The span of the agent library's loaded segments: signal handlers there
// are the agent's own, not the program's.
std::pair<uint64_t, uint64_t> agent_code_range() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&agent_code_range), &info) ||
      !info.dli_fbase)
    return {0, 0};
  struct Find {
    uint64_t base, lo = ~uint64_t{0}, hi = 0;
  } find{reinterpret_cast<uint64_t>(info.dli_fbase)};
  dl_iterate_phdr(
      [](dl_phdr_info *obj, size_t, void *data) {
        auto *f = static_cast<Find *>(data);
        if (obj->dlpi_addr != f->base) // a shared object's load base
          return 0;
        for (int i = 0; i < obj->dlpi_phnum; i++) {
          const auto &ph = obj->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD)
            continue;
          uint64_t start = obj->dlpi_addr + ph.p_vaddr;
          f->lo = std::min(f->lo, start);
          f->hi = std::max(f->hi, start + ph.p_memsz);
        }
        return 0;
      },
      &find);
  return find.hi ? std::make_pair(find.lo, find.hi)
                 : std::make_pair(uint64_t{0}, uint64_t{0});
}

Result<Started> start(Handler fn) {
  Started out;
  if (is_active())
    return out;
  if (runtime::helpers::sandboxed())
    return make_error("the process runs under a seccomp filter, which may "
                      "forbid the calls system call probes need");
  if (!g_exec)
    if (auto mapped = map_exempt_code(); !mapped)
      return std::move(mapped).take_error();
  if (!g_selector) {
    void *s = mmap(nullptr, 2 * kMaxTid, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED)
      return make_error(std::string("cannot map the selector table: ") +
                        strerror(errno));
    g_selector = static_cast<char *>(s);
    g_enabled = g_selector + kMaxTid;
  }
  // The kernel must support dispatch: try it on this (agent) thread.
  if (raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 1,
          reinterpret_cast<long>(g_exec), kCodePages * kPage,
          reinterpret_cast<long>(&g_selector[0])) != 0)
    return make_error("this kernel has no syscall user dispatch (Linux 5.11 "
                      "with CONFIG_GENERIC_ENTRY), which system call probes "
                      "run on");
  raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0, 0, 0, 0);
  runtime::helpers::prepare_thread_identity();
  g_tid_offset = runtime::helpers::thread_id_offset();
  for (int nr : state::kDispatchOnly)
    g_slow[nr] = 1;
  g_handler = fn;
  g_chain.restorer = reinterpret_cast<void (*)()>(g_exec);
  g_chain.onstack = false;
  // The returns of our other handlers (hook traps, fault-safe reads,
  // profiling samples) are not the program's rt_sigreturn calls either.
  runtime::helpers::set_shared_restorer(g_chain.restorer);
  if (auto ok = runtime::helpers::install_first(g_chain); !ok)
    return std::move(ok).take_error();
  unblock_in_handlers();
  g_stopped.store(false, std::memory_order_relaxed);
  __atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
  // The program's handlers run at BLOCK from here (syscall_signals.h).
  auto [agent_lo, agent_hi] = agent_code_range();
  signals::wrap_all(agent_lo, agent_hi);
  int32_t me = my_tid();
  pid_t pid = getpid();
  std::vector<int32_t> asked, skipped;
  // Threads started by a thread not yet dispatching are not traced from
  // their start: listed again until a pass finds none new.
  for (int pass = 0; pass < 4; pass++) {
    size_t before = asked.size();
    for (int32_t tid : profile::threads_now()) {
      if (tid == me || profile::is_agent_tid(tid) || size_t(tid) >= kMaxTid ||
          std::find(asked.begin(), asked.end(), tid) != asked.end() ||
          std::find(skipped.begin(), skipped.end(), tid) != skipped.end())
        continue;
      if (profile::blocked_signals(tid) & (uint64_t{1} << (SIGSYS - 1))) {
        out.blocked++;
        g_untraced.fetch_add(1, std::memory_order_relaxed);
        skipped.push_back(tid); // never asked: it would hold the signal
        continue;
      }
      siginfo_t si{};
      si.si_signo = SIGSYS;
      si.si_code = SI_QUEUE;
      si.si_pid = pid;
      si.si_uid = getuid();
      si.si_value.sival_ptr = &g_cookie;
      if (raw(SYS_rt_tgsigqueueinfo, pid, tid, SIGSYS,
              reinterpret_cast<long>(&si)) == 0)
        asked.push_back(tid);
    }
    // Each asked thread turns dispatch on at its next return to user
    // space (a blocked system call is interrupted and restarted).
    for (int waited = 0; waited < 500; waited++) {
      bool all = true;
      for (int32_t tid : asked)
        all = all && g_enabled[tid];
      if (all)
        break;
      usleep(1000);
    }
    if (asked.size() == before)
      break;
  }
  for (int32_t tid : asked) {
    if (g_enabled[tid])
      out.threads++;
    else
      g_untraced.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

void want(int nr, bool exit) {
  if (nr < 0)
    std::memset(g_slow, 1, sizeof g_slow);
  else if (nr < kMaxNr)
    g_slow[nr] = 1;
  if (nr < 0)
    __atomic_store_n(&g_want_all[exit], true, __ATOMIC_RELAXED);
  else if (nr < kMaxNr)
    __atomic_fetch_or(&g_want[exit][nr / 64], uint64_t{1} << (nr % 64),
                      __ATOMIC_RELAXED);
}

void stop() {
  if (!__atomic_exchange_n(&g_active, false, __ATOMIC_ACQ_REL))
    return;
  g_stopped.store(true, std::memory_order_release);
  // Under a new seccomp filter no call of ours may be made (it may kill
  // the process): the wrappers stay, and call straight through.
  if (!g_sandboxed.load(std::memory_order_relaxed))
    signals::unwrap_all();
  // Every selector to ALLOW: no thread traps from here on, whatever it
  // blocks; the handler stays for calls already on their way.
  for (size_t tid = 0; tid < kMaxTid; tid += kPage)
    if (std::memchr(g_enabled + tid, 1, kPage))
      for (size_t i = tid; i < tid + kPage; i++)
        if (g_enabled[i])
          g_selector[i] = kAllow;
}

bool active() {
  return is_active();
}

int blocked_signal() {
  return active() ? SIGSYS : 0;
}

bool filter_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old) {
  return sig == SIGSYS && runtime::helpers::filter_sigaction(g_chain, act, old);
}

void agent_thread_started() {
  if (!g_raw)
    return;
  int32_t tid = my_tid();
  if (tid > 0 && size_t(tid) < kMaxTid && g_enabled[tid]) {
    raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0, 0, 0, 0);
    g_enabled[tid] = 0;
  }
}

Counters counters() {
  Counters c;
  c.calls = g_calls.load(std::memory_order_relaxed);
  c.untraced_threads = g_untraced.load(std::memory_order_relaxed);
  c.clones_refused = g_refused.load(std::memory_order_relaxed);
  c.child_exits_unseen =
      __atomic_load_n(&state::g_child_exits_unseen, __ATOMIC_RELAXED);
  c.sandboxed = g_sandboxed.load(std::memory_order_relaxed);
  c.sites_rewritten = g_sites_rewritten.load(std::memory_order_relaxed);
  c.sites_kept = g_sites_kept.load(std::memory_order_relaxed);
  return c;
}

OwnCalls::OwnCalls() {
  if (t_own_depth++ > 0)
    return;
  char *selector = own_selector();
  t_own_restore = selector ? *selector : kAllow;
  if (selector)
    *selector = kAllow;
}

OwnCalls::~OwnCalls() {
  if (--t_own_depth > 0)
    return;
  if (char *selector = own_selector())
    *selector =
        g_stopped.load(std::memory_order_relaxed) ? kAllow : t_own_restore;
}

} // namespace ubtrace::agent::syscalls

// Scopes of agent work for the preload's C constructor (OwnCalls).
extern "C" __attribute__((visibility("default"))) void
ubtrace_agent_own_calls(int begin) {
  using ubtrace::agent::syscalls::OwnCalls;
  alignas(OwnCalls) static __thread unsigned char scope[sizeof(OwnCalls)]
      __attribute__((tls_model("initial-exec")));
  if (begin)
    new (scope) OwnCalls();
  else
    reinterpret_cast<OwnCalls *>(scope)->~OwnCalls();
}

// A new task made by a traced thread's clone, fork or vfork, right after
// the call (the stub's way back): dispatch on, as its parent had it.
extern "C" void ubt_syscalls_child() {
  using namespace ubtrace::agent::syscalls;
  if (!is_active())
    return;
  int32_t tid = my_tid();
  if (enable_self(tid))
    g_selector[tid] = kBlock;
  else
    g_untraced.fetch_add(1, std::memory_order_relaxed);
}
