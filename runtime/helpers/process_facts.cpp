#include "runtime/helpers/process_facts.h"

#include "runtime/helpers/pid_view.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/helpers/thread_identity.h"
#include "runtime/probe_safe.h"
#include "runtime/wiped_on_fork.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::helpers {
namespace {

using ClockGettime = int (*)(clockid_t, struct timespec *);
using Getcpu = long (*)(unsigned *, unsigned *, void *);

// Set once by prepare_process_facts (before the agent installs a hook).
ClockGettime g_vdso_clock = nullptr;
Getcpu g_vdso_getcpu = nullptr;
long g_rseq_offset = 0; // from the thread pointer; valid if g_rseq
bool g_rseq = false;
uint64_t g_cgroup_id = 0;
char g_process_comm[16] = {};

std::atomic<uint64_t> g_sandbox_skips{0};

struct Ids {
  uint32_t pid;
  uint32_t tid;
};
__thread Ids t_ids __attribute__((tls_model("initial-exec"))) = {0, 0};

// glibc's word for the thread id is right in every thread glibc made or
// forked, but a raw fork or clone system call leaves the child's copy
// naming the forking thread. So each thread checks the word once against
// gettid, and again in every fork child: the process's generation is a
// word the kernel zeroes in a child (wiped_on_fork.h), where the first
// look takes the number after its parent's. Without MADV_WIPEONFORK
// (before Linux 4.14) a child is not noticed and trusts the word.
constinit WipedOnFork g_generation{1};

struct TidCheck {
  int32_t word; // glibc's word when checked
  uint32_t gen; // in this generation
  uint32_t tid; // what gettid said
};
__thread TidCheck t_tid_check
    __attribute__((tls_model("initial-exec"))) = {0, 0, 0};

uint32_t generation() {
  std::atomic<uint32_t> &word = g_generation.word();
  uint32_t gen = word.load(std::memory_order_acquire);
  if (gen != 0)
    return gen;
  // A fork child's first look: one thread makes its number.
  uint32_t next = g_generation.last() + 1;
  if (next == 0)
    next = 1;
  if (!word.compare_exchange_strong(gen, next, std::memory_order_acq_rel))
    return gen;
  g_generation.store(next);
  return next;
}

__thread char t_comm[16] __attribute__((tls_model("initial-exec"))) = {};
__thread bool t_comm_read __attribute__((tls_model("initial-exec"))) = false;

uint64_t thread_pointer() {
  uint64_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}

// The vDSO's functions, from its dynamic symbol table.
void read_vdso() {
  auto base = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  if (!base)
    return;
  const auto *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
    return;
  const auto *ph = reinterpret_cast<const Elf64_Phdr *>(base + eh->e_phoff);
  uintptr_t bias = 0;
  const Elf64_Dyn *dyn = nullptr;
  bool bias_set = false;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD && !bias_set) {
      bias = base + ph[i].p_offset - ph[i].p_vaddr;
      bias_set = true;
    }
    if (ph[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const Elf64_Dyn *>(base + ph[i].p_offset);
  }
  if (!dyn || !bias_set)
    return;
  const Elf64_Sym *symtab = nullptr;
  const char *strtab = nullptr;
  const uint32_t *hash = nullptr;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB)
      symtab = reinterpret_cast<const Elf64_Sym *>(bias + dyn->d_un.d_ptr);
    else if (dyn->d_tag == DT_STRTAB)
      strtab = reinterpret_cast<const char *>(bias + dyn->d_un.d_ptr);
    else if (dyn->d_tag == DT_HASH)
      hash = reinterpret_cast<const uint32_t *>(bias + dyn->d_un.d_ptr);
  }
  if (!symtab || !strtab || !hash)
    return;
  for (uint32_t i = 0; i < hash[1]; ++i) { // nchain: the symbol count
    const Elf64_Sym &sym = symtab[i];
    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
      continue;
    const char *name = strtab + sym.st_name;
    void *at = reinterpret_cast<void *>(bias + sym.st_value);
    if (strcmp(name, "__vdso_clock_gettime") == 0)
      g_vdso_clock = reinterpret_cast<ClockGettime>(at);
    else if (strcmp(name, "__vdso_getcpu") == 0)
      g_vdso_getcpu = reinterpret_cast<Getcpu>(at);
  }
}

// glibc 2.35+ registers rseq for every thread; cpu_id is its second word.
void read_rseq() {
  const auto *offset =
      static_cast<const ptrdiff_t *>(dlsym(RTLD_DEFAULT, "__rseq_offset"));
  const auto *size =
      static_cast<const unsigned *>(dlsym(RTLD_DEFAULT, "__rseq_size"));
  if (offset && size && *size >= 8) {
    g_rseq_offset = *offset;
    g_rseq = true;
  }
}

} // namespace

uint64_t cgroup_id_of(const std::string &pid) {
  // The cgroup2 directory's inode, as the kernel reports cgroup ids.
  FILE *f = fopen(("/proc/" + pid + "/cgroup").c_str(), "re");
  if (!f)
    return 0;
  char line[4096];
  uint64_t id = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "0::", 3) != 0)
      continue;
    line[strcspn(line, "\n")] = 0;
    std::string path = std::string("/sys/fs/cgroup") + (line + 3);
    struct stat st;
    if (stat(path.c_str(), &st) == 0)
      id = st.st_ino;
  }
  fclose(f);
  return id;
}

void prepare_process_facts() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  read_vdso();
  read_rseq();
  prepare_thread_identity();
  g_generation.place();
  prepare_pid_view();
  g_cgroup_id = cgroup_id_of("self");
  probe_safe::raw_syscall(SYS_prctl, PR_GET_NAME,
                          reinterpret_cast<long>(g_process_comm));
  g_process_comm[15] = 0;
}

uint64_t clock_ns(clockid_t clock) {
  struct timespec ts = {0, 0};
  if (!g_vdso_clock || g_vdso_clock(clock, &ts) != 0)
    probe_safe::raw_syscall(SYS_clock_gettime, clock,
                            reinterpret_cast<long>(&ts));
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t current_cpu() {
  if (g_rseq) {
    uint32_t cpu = *reinterpret_cast<const volatile uint32_t *>(
        thread_pointer() + g_rseq_offset + 4);
    if (static_cast<int32_t>(cpu) >= 0)
      return cpu;
  }
  unsigned cpu = 0;
  if (g_vdso_getcpu && g_vdso_getcpu(&cpu, nullptr, nullptr) == 0)
    return cpu;
  if (probe_safe::raw_syscall(SYS_getcpu, reinterpret_cast<long>(&cpu)) != 0)
    return 0;
  return cpu;
}

uint32_t current_numa_node() {
  unsigned cpu = 0, node = 0;
  if (g_vdso_getcpu && g_vdso_getcpu(&cpu, &node, nullptr) == 0)
    return node;
  if (probe_safe::raw_syscall(SYS_getcpu, reinterpret_cast<long>(&cpu),
                              reinterpret_cast<long>(&node)) != 0)
    return 0;
  return node;
}

uint32_t current_tid() {
  if (const volatile int32_t *word = thread_id_word()) {
    int32_t tid = *word;
    if (tid > 0) {
      const uint32_t gen = generation();
      TidCheck &check = t_tid_check;
      if (check.word == tid && check.gen == gen)
        return check.tid;
      if (sandboxed())
        return static_cast<uint32_t>(tid); // no call the filter may kill
      check.tid = static_cast<uint32_t>(probe_safe::raw_syscall(SYS_gettid));
      check.word = tid;
      check.gen = gen;
      return check.tid;
    }
  }
  return static_cast<uint32_t>(probe_safe::raw_syscall(SYS_gettid));
}

void forget_thread_id() {
  __atomic_store_n(&t_tid_check.word, 0, __ATOMIC_RELAXED);
}

int64_t thread_id_word_offset() {
  return static_cast<int64_t>(reinterpret_cast<uint64_t>(&t_tid_check.word) -
                              thread_pointer());
}

uint32_t current_pid() {
  // A fork child's thread has another id than the one the cache was made
  // on: ask again.
  uint32_t tid = current_tid();
  if (t_ids.pid == 0 || t_ids.tid != tid) {
    t_ids.pid = static_cast<uint32_t>(probe_safe::raw_syscall(SYS_getpid));
    t_ids.tid = tid;
  }
  return t_ids.pid;
}

uint64_t current_cgroup_id() {
  return g_cgroup_id;
}

void current_comm(char out[16]) {
  if (!sandboxed()) {
    char name[16] = {};
    if (probe_safe::raw_syscall(SYS_prctl, PR_GET_NAME,
                                reinterpret_cast<long>(name)) == 0) {
      name[15] = 0;
      probe_safe::copy_bytes(t_comm, name, sizeof name);
      t_comm_read = true;
    }
  } else {
    count_sandbox_skip();
  }
  probe_safe::copy_bytes(out, t_comm_read ? t_comm : g_process_comm, 16);
}

namespace {

// "/proc/<pid>/comm" into path (at least 32 bytes), without printf.
void comm_path(uint32_t pid, char *path) {
  static const char kHead[] = "/proc/";
  static const char kTail[] = "/comm";
  size_t n = 0;
  for (size_t i = 0; kHead[i]; ++i)
    path[n++] = kHead[i];
  char digits[10];
  size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid && d < sizeof digits);
  while (d)
    path[n++] = digits[--d];
  for (size_t i = 0; kTail[i]; ++i)
    path[n++] = kTail[i];
  path[n] = 0;
}

// The name in /proc/<pid>/comm, its newline dropped; false if unreadable
// (no /proc after a chroot, the process gone).
bool read_comm_file(uint32_t pid, char out[16]) {
  char path[32];
  comm_path(pid, path);
  long fd = probe_safe::raw_syscall(
      SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[17] = {};
  long n =
      probe_safe::raw_syscall(SYS_read, fd, reinterpret_cast<long>(buf), 16);
  probe_safe::raw_syscall(SYS_close, fd);
  if (n <= 0)
    return false;
  if (buf[n - 1] == '\n')
    --n;
  if (n > 15)
    n = 15;
  probe_safe::fill_bytes(out, 0, 16);
  probe_safe::copy_bytes(out, buf, static_cast<size_t>(n));
  return true;
}

} // namespace

void related_comm(RelatedTask which, char out[16]) {
  probe_safe::fill_bytes(out, 0, 16);
  if (which == RelatedTask::Leader && current_tid() == current_pid()) {
    current_comm(out);
    return;
  }
  if (sandboxed()) {
    // open and read may be forbidden: the leader's name as the agent found
    // it at start, the parent's not at all.
    count_sandbox_skip();
    if (which == RelatedTask::Leader)
      probe_safe::copy_bytes(out, g_process_comm, 16);
    return;
  }
  uint32_t pid =
      which == RelatedTask::Leader
          ? current_pid()
          : static_cast<uint32_t>(probe_safe::raw_syscall(SYS_getppid));
  if (!read_comm_file(pid, out) && which == RelatedTask::Leader)
    probe_safe::copy_bytes(out, g_process_comm, 16);
}

long signal_self(int sig) {
  if (sandboxed()) {
    count_sandbox_skip();
    return -EPERM;
  }
  return probe_safe::raw_syscall(SYS_kill, current_pid(), sig);
}

uint64_t sandbox_skips() {
  return g_sandbox_skips.load(std::memory_order_relaxed);
}

void count_sandbox_skip() {
  g_sandbox_skips.fetch_add(1, std::memory_order_relaxed);
}

} // namespace ubtrace::runtime::helpers
