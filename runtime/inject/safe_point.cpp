#include "runtime/inject/safe_point.h"

#include "runtime/inject/call_site.h"
#include "runtime/inject/hex.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <string_view>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

// How far above rsp to look for a signal frame.
constexpr uint64_t kSignalFrameScan = 32 * 1024;

// Offsets in the kernel's x86-64 rt_sigframe, counted from the slot
// holding the return address into the trampoline (pretcode): then comes
// struct ucontext { uc_flags, uc_link, uc_stack (24 bytes), uc_mcontext }
// and in the mcontext r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
constexpr uint64_t kMcontext = 8 + 8 + 8 + 24;
constexpr uint64_t kSavedRip = kMcontext + 16 * 8;

// A live signal frame above rsp whose handler interrupted glibc code.
std::optional<uint64_t> interrupted_glibc_rip(uint64_t rsp,
                                              const TargetGlibc &glibc,
                                              const RemoteMemory &memory) {
  auto trampoline = glibc.sigreturn_trampoline();
  if (!trampoline)
    return std::nullopt;
  std::array<uint64_t, 512> words; // one 4 KiB page at a time
  uint64_t start = rsp & ~uint64_t{7};
  for (uint64_t at = start; at < start + kSignalFrameScan;) {
    uint64_t page_end = (at | 4095) + 1;
    size_t count = static_cast<size_t>((page_end - at) / 8);
    if (!memory.read(at, words.data(), count * 8))
      return std::nullopt; // end of the stack mapping
    for (size_t i = 0; i < count; ++i) {
      if (words[i] != *trampoline)
        continue;
      auto saved = memory.read_value<uint64_t>(at + i * 8 + kSavedRip);
      if (saved && glibc.in_glibc_code(*saved))
        return *saved;
    }
    at = page_end;
  }
  return std::nullopt;
}

template <size_t N>
bool listed(std::string_view name, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

} // namespace

bool is_lock_free_libc_function(std::string_view name) {
  static constexpr std::string_view kLockFree[] = {
      "read",
      "write",
      "readv",
      "writev",
      "pread64",
      "pwrite64",
      "preadv",
      "pwritev",
      "preadv2",
      "pwritev2",
      "recv",
      "recvfrom",
      "recvmsg",
      "recvmmsg",
      "send",
      "sendto",
      "sendmsg",
      "sendmmsg",
      "accept",
      "accept4",
      "connect",
      "poll",
      "ppoll",
      "select",
      "pselect",
      "epoll_wait",
      "epoll_pwait",
      "epoll_pwait2",
      "nanosleep",
      "clock_nanosleep",
      "sleep",
      "usleep",
      "pause",
      "sigsuspend",
      "sigtimedwait",
      "sigwaitinfo",
      "sigwait",
      "wait",
      "wait3",
      "wait4",
      "waitpid",
      "waitid",
      "msgrcv",
      "msgsnd",
      "semop",
      "semtimedop",
      "syscall",
      "open",
      "open64",
      "openat",
      "openat64",
      "close",
      "fsync",
      "fdatasync",
      "creat",
      "creat64",
      "flock",
      "fcntl",
      "fcntl64",
      "lockf",
      "lockf64",
      "ioctl",
      "mq_receive",
      "mq_timedreceive",
      "mq_send",
      "mq_timedsend",
      "splice",
      "tee",
      "vmsplice",
      "sendfile",
      "sendfile64",
      "msync",
      "sync",
      "syncfs",
      "getrandom",
      // Plain wrappers, which a program makes early (a held program is
      // lent at the first of these it calls: exec_hold.h); from
      // malloc or any other glibc code they are refused by the chain.
      "access",
      "faccessat",
      "stat",
      "stat64",
      "fstat",
      "fstat64",
      "lstat",
      "lstat64",
      "fstatat",
      "fstatat64",
      "statx",
      "statfs",
      "fstatfs",
      "lseek",
      "lseek64",
      "readlink",
      "readlinkat",
      "getdents64",
      "mmap",
      "mmap64",
      "munmap",
      "mprotect",
      "madvise",
      "dup",
      "dup2",
      "dup3",
      "pipe",
      "pipe2",
      "uname",
      "unlink",
      "unlinkat",
      "mkdir",
      "mkdirat",
      "rename",
      "renameat",
      "chdir",
      "fchdir",
      "ftruncate",
      "ftruncate64",
      "getpid",
      "getppid",
      "getuid",
      "geteuid",
      "getgid",
      "getegid",
      "socket",
      "bind",
      "listen",
      "setsockopt",
      "getsockopt",
      "getsockname",
      "getpeername",
      "epoll_create1",
      "epoll_ctl",
      "eventfd",
      "sched_yield",
  };
  return listed(name, kLockFree);
}

bool is_parked_wait_function(std::string_view name) {
  static constexpr std::string_view kParked[] = {
      "pthread_cond_wait",
      "pthread_cond_timedwait",
      "pthread_cond_clockwait",
      "pthread_join",
      "pthread_timedjoin_np",
      "pthread_clockjoin_np",
      "sem_wait",
      "sem_timedwait",
      "sem_clockwait",
      "pthread_barrier_wait",
      "pthread_mutex_lock",
      "pthread_mutex_timedlock",
      "pthread_mutex_clocklock",
      "pthread_rwlock_rdlock",
      "pthread_rwlock_wrlock",
      "pthread_rwlock_timedrdlock",
      "pthread_rwlock_timedwrlock",
      "pthread_rwlock_clockrdlock",
      "pthread_rwlock_clockwrlock",
  };
  return listed(name, kParked);
}

bool is_stdio_function(std::string_view name) {
  // What programs call, then libio's exported internals (_IO_*, the
  // underflow/overflow entries) that run between them and the call.
  static constexpr std::string_view kStdio[] = {
      "fgets",
      "fgets_unlocked",
      "getline",
      "getdelim",
      "__getdelim",
      "fgetc",
      "fgetc_unlocked",
      "getc",
      "getc_unlocked",
      "getchar",
      "getchar_unlocked",
      "fread",
      "fread_unlocked",
      "fflush",
      "fflush_unlocked",
      "fputs",
      "fputs_unlocked",
      "puts",
      "fputc",
      "fputc_unlocked",
      "putc",
      "putc_unlocked",
      "putchar",
      "putchar_unlocked",
      "fwrite",
      "fwrite_unlocked",
      "printf",
      "fprintf",
      "vprintf",
      "vfprintf",
      "__printf_chk",
      "__fprintf_chk",
      "__vprintf_chk",
      "__vfprintf_chk",
      "__underflow",
      "__uflow",
      "__overflow",
  };
  return name.starts_with("_IO_") || listed(name, kStdio);
}

namespace {

bool any_of_names(const std::vector<std::string_view> &names,
                  bool (*wanted)(std::string_view)) {
  for (std::string_view name : names)
    if (wanted(name))
      return true;
  return false;
}

// The exported names of the glibc function the program called to get
// where `chain` is: as its call site says (an exported function may have
// tail-called an internal one, whose frame is all there is), else the
// outermost glibc frame (a return address there, unless it is the only
// one).
std::vector<std::string_view> program_called(const GlibcCallChain &chain,
                                             const TargetGlibc &glibc,
                                             const RemoteMemory &memory) {
  if (auto called = called_function(chain.caller, memory);
      called && glibc.in_glibc_code(*called))
    if (auto names = glibc.names_at(*called); !names.empty())
      return names;
  return glibc.names_at(chain.pcs.back() - (chain.pcs.size() > 1 ? 1 : 0));
}

// "parked in pthread_cond_wait (libc.so.6:...)", or why not.
std::optional<std::string> parked_wait(const user_regs_struct &regs,
                                       const TargetGlibc &glibc,
                                       const GlibcUnwinder &unwinder,
                                       const RemoteMemory &memory) {
  if (regs.orig_rax != SYS_futex)
    return std::nullopt;
  auto chain = unwinder.unwind(regs, memory);
  if (!chain || chain->pcs.empty())
    return std::nullopt;
  for (std::string_view name : program_called(*chain, glibc, memory))
    if (is_parked_wait_function(name))
      return "parked in " + std::string(name) + " (at " +
             glibc.describe(regs.rip) + ", called from " + hex(chain->caller) +
             ")";
  return std::nullopt;
}

// A thread in a lock-free function (rip there): safe when the program
// called it itself, or through stdio, every glibc frame between being one
// of those; or why not. glibc skips its locks while a process has one
// thread, so code such as malloc's first call (which reads getrandom
// before its arena is set up) is mid-update with no lock to show for it:
// the frames are what tells.
Result<std::string> blocked_call(const user_regs_struct &regs,
                                 const TargetGlibc &glibc,
                                 const GlibcUnwinder &unwinder,
                                 const RemoteMemory &memory) {
  const std::string where = glibc.describe(regs.rip);
  auto chain = unwinder.unwind(regs, memory);
  if (!chain || chain->pcs.empty())
    return make_error("inside glibc (" + where +
                      "), called from where its stack does not say" +
                      (chain ? std::string() : ": " + chain.error()));
  auto allowed = [](const std::vector<std::string_view> &names) {
    return any_of_names(names, is_lock_free_libc_function) ||
           any_of_names(names, is_stdio_function);
  };
  for (size_t i = 1; i < chain->pcs.size(); ++i) {
    uint64_t call = chain->pcs[i] - 1; // inside the calling instruction
    if (!allowed(glibc.names_at(call)))
      return make_error("inside glibc (" + where + "), called by glibc's " +
                        glibc.describe(call));
  }
  auto called = program_called(*chain, glibc, memory);
  if (!allowed(called))
    return make_error("inside glibc (" + where + "), called by glibc's " +
                      (called.empty() ? std::string("own code")
                                      : std::string(called.front())));
  return "blocked in " + where;
}

SafePoint classify(const user_regs_struct &regs, const TargetGlibc &glibc,
                   const GlibcUnwinder &unwinder, const RemoteMemory &memory) {
  std::optional<std::string> reason;
  if (glibc.in_glibc_code(regs.rip)) {
    if (any_of_names(glibc.libc_names_at(regs.rip),
                     is_lock_free_libc_function)) {
      auto blocked = blocked_call(regs, glibc, unwinder, memory);
      if (!blocked)
        return {false, blocked.error()};
      reason = *blocked;
    } else {
      reason = parked_wait(regs, glibc, unwinder, memory);
      if (!reason)
        return {false, "inside glibc (" + glibc.describe(regs.rip) + ")"};
    }
  }
  if (auto interrupted = interrupted_glibc_rip(regs.rsp, glibc, memory))
    return {false, "in a signal handler that interrupted glibc (" +
                       glibc.describe(*interrupted) + ")"};
  if (reason)
    return {true, *reason};
  return {true, "running its own code at " + hex(regs.rip)};
}

} // namespace

SafePoint SafePoints::classify(const user_regs_struct &regs,
                               const RemoteMemory &memory) const {
  return inject::classify(regs, glibc_, unwinder_, memory);
}

SafePoint classify_stop(const user_regs_struct &regs, const TargetGlibc &glibc,
                        const RemoteMemory &memory) {
  return SafePoints(glibc).classify(regs, memory);
}

} // namespace ubtrace::runtime::inject
