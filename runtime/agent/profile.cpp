// Built with -fno-builtin: the loops below run on program threads (the
// pthread_create wrapper, the fork child) and must not become libc calls.
#include "runtime/agent/profile.h"

#include "runtime/agent/raw_syscall.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/helpers/signal_chain.h"
#include "runtime/hook/memory_map.h"
#include "runtime/hook/site_bindings.h"
#include "runtime/hook/trap_handler.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <string>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::agent::profile {
namespace {

// si_value of our timers' signals: the cookie and the period's index.
constexpr int kCookie = 0x75620000;
constexpr int kCookieMask = ~0xFF;
// Expirations of one signal the probe runs for (see on_signal).
constexpr uint64_t kMaxReplays = 64;

struct Period {
  uint64_t period_ns = 0;
  runtime::hook::Handler fn = nullptr;
  void *user = nullptr;
};
Period g_periods[kMaxPeriods];
std::atomic<uint32_t> g_nperiods{0};
std::atomic<bool> g_active{false};
std::atomic<int> g_signal{0};

void on_signal(int sig, siginfo_t *info, void *context);
runtime::helpers::ChainedSignal g_chain{0, on_signal};

std::atomic<uint64_t> g_overruns{0}, g_untimed{0}, g_late{0}, g_blocked{0};
// Threads noted Pending (started under a filter), not yet armed.
std::atomic<uint32_t> g_pending{0};
// A seccomp filter covers every thread, the agent's too (sandboxed()).
std::atomic<bool> g_all_filtered{false};

// The thread table: open addressing on the tid. tid 0: empty, -1: a
// thread that exited (a tombstone, reused by inserts).
constexpr uint32_t kCapacity = 32768; // twice the hook runtime's threads
enum class ThreadArm : int32_t {
  Yes,     // has its timers (or some)
  Pending, // started under a seccomp filter: the rescan arms it
  Failed,  // no timer could be made (counted once)
  Blocked, // blocked the signal when found: never armed (counted once)
};
struct Entry {
  int32_t tid;
  ThreadArm state;
  bool late;                   // armed by a rescan, counted late
  int32_t timers[kMaxPeriods]; // -1: none
};
Entry *g_table = nullptr; // allocated by the first add_period
uint32_t g_tombstones = 0;
// The slots ever filled since the table was last emptied (live entries and
// tombstones), so that rescans, compaction and a forked child walk those,
// not the whole table. Under the lock; allocated with the table.
uint32_t *g_used = nullptr;
uint32_t g_nused = 0;
std::atomic<bool> g_lock{false};

// The agent's own threads: never armed.
constexpr int kAgentThreads = 16;
std::atomic<int32_t> g_agent_tids[kAgentThreads];

// Spins without a system call once the program is sandboxed (a filter may
// forbid sched_yield on the thread): holders keep it for microseconds.
void lock() {
  while (g_lock.exchange(true, std::memory_order_acquire)) {
    if (runtime::helpers::sandboxed())
      __builtin_ia32_pause();
    else
      raw_syscall(SYS_sched_yield);
  }
}
void unlock() {
  g_lock.store(false, std::memory_order_release);
}

int32_t current_tid() {
  return static_cast<int32_t>(raw_syscall(SYS_gettid));
}

bool is_agent_thread(int32_t tid) {
  for (auto &t : g_agent_tids)
    if (t.load(std::memory_order_relaxed) == tid)
      return true;
  return false;
}

void clear_entry(Entry &e, int32_t tid) {
  e.tid = tid;
  e.state = ThreadArm::Yes;
  e.late = false;
  for (int32_t &t : e.timers)
    t = -1;
}

Entry *find(int32_t tid) {
  for (uint32_t i = 0, h = uint32_t(tid) * 2654435761u; i < kCapacity; i++) {
    Entry &e = g_table[(h + i) % kCapacity];
    if (e.tid == tid)
      return &e;
    if (e.tid == 0)
      return nullptr;
  }
  return nullptr;
}

Entry *insert(int32_t tid) {
  Entry *free_slot = nullptr;
  for (uint32_t i = 0, h = uint32_t(tid) * 2654435761u; i < kCapacity; i++) {
    Entry &e = g_table[(h + i) % kCapacity];
    if (e.tid == tid)
      return &e;
    if (e.tid == -1 && !free_slot)
      free_slot = &e;
    if (e.tid == 0) {
      if (!free_slot)
        free_slot = &e;
      break;
    }
  }
  if (!free_slot)
    return nullptr;
  if (free_slot->tid == -1)
    g_tombstones--;
  else
    g_used[g_nused++] = static_cast<uint32_t>(free_slot - g_table);
  clear_entry(*free_slot, tid);
  return free_slot;
}

void delete_timers(Entry &e) {
  for (int32_t &t : e.timers)
    if (t >= 0) {
      raw_syscall(SYS_timer_delete, t);
      t = -1;
    }
}

// The entry of `tid` in `state`: new, or taken over from a thread gone
// with that tid before a rescan saw it go (its timers died with it: deleted
// when `may_syscall`, else left; one it left unarmed is counted). Under
// the lock.
Entry *take_entry(int32_t tid, ThreadArm state, bool may_syscall) {
  Entry *e = find(tid);
  if (e) {
    if (e->state == ThreadArm::Pending) {
      g_untimed.fetch_add(1, std::memory_order_relaxed);
      g_pending.fetch_sub(1, std::memory_order_relaxed);
    }
    if (may_syscall)
      delete_timers(*e);
    clear_entry(*e, tid);
  } else {
    e = insert(tid);
  }
  if (e)
    e->state = state;
  return e;
}

// Whether e's first timer is armed: a live thread's periodic timer always
// is, a timer whose thread is gone reads as disarmed.
bool timer_live(const Entry &e) {
  for (int32_t t : e.timers)
    if (t >= 0) {
      struct itimerspec its{};
      if (raw_syscall(SYS_timer_gettime, t, reinterpret_cast<long>(&its)) != 0)
        return false;
      return its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0;
    }
  return false;
}

void erase(Entry &e) {
  // A thread that ended before a rescan could arm it was never sampled.
  if (e.state == ThreadArm::Pending) {
    g_untimed.fetch_add(1, std::memory_order_relaxed);
    g_pending.fetch_sub(1, std::memory_order_relaxed);
  }
  delete_timers(e);
  e.tid = -1;
  g_tombstones++;
}

// The CPU-time clock of thread `tid` (the kernel's MAKE_THREAD_CPUCLOCK of
// CPUCLOCK_SCHED): ~tid << 3 | per-thread (4) | sched (2).
clockid_t thread_clock(int32_t tid) {
  return static_cast<clockid_t>((~static_cast<uint32_t>(tid) << 3) | 6);
}

// A timer on `tid`'s CPU clock signalling that thread every period; -1 on
// failure.
int32_t make_timer(int32_t tid, uint32_t index) {
  struct sigevent sev;
  for (size_t i = 0; i < sizeof sev; i++)
    reinterpret_cast<volatile char *>(&sev)[i] = 0;
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = g_signal.load(std::memory_order_relaxed);
  sev.sigev_value.sival_int = kCookie | static_cast<int>(index);
  sev._sigev_un._tid = tid;
  int timer = -1;
  if (raw_syscall(SYS_timer_create, thread_clock(tid),
                  reinterpret_cast<long>(&sev),
                  reinterpret_cast<long>(&timer)) != 0)
    return -1;
  uint64_t ns = g_periods[index].period_ns;
  struct itimerspec its;
  its.it_interval.tv_sec = static_cast<time_t>(ns / 1000000000ull);
  its.it_interval.tv_nsec = static_cast<long>(ns % 1000000000ull);
  // The first expiry at a random point of the first period: a thread that
  // uses less CPU than one period is then sampled with the probability its
  // CPU time makes (not never), and threads do not fall due in step.
  uint64_t mix = (__builtin_ia32_rdtsc() ^ uint64_t(uint32_t(tid)) << 32) *
                 0x9E3779B97F4A7C15ull;
  uint64_t first = 1 + (mix >> 11) % ns;
  its.it_value.tv_sec = static_cast<time_t>(first / 1000000000ull);
  its.it_value.tv_nsec = static_cast<long>(first % 1000000000ull);
  if (raw_syscall(SYS_timer_settime, timer, 0, reinterpret_cast<long>(&its),
                  0) != 0) {
    raw_syscall(SYS_timer_delete, timer);
    return -1;
  }
  return timer;
}

// Gives thread `e.tid` a timer for every period it lacks one for. False
// when it has none at all.
bool arm(Entry &e) {
  uint32_t n = g_nperiods.load(std::memory_order_acquire);
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    if (e.timers[i] < 0)
      e.timers[i] = make_timer(e.tid, i);
    any |= e.timers[i] >= 0;
  }
  return any;
}

// The dispatched handler: the period's probes, unless sampling stopped. The
// check comes after the guard's seq went odd, so stop()'s wait for running
// dispatches sees this one or it sees sampling off.
void run_period(runtime::hook::PtRegs *regs, void *user) {
  if (!g_active.load(std::memory_order_acquire))
    return;
  const Period *p = static_cast<const Period *>(user);
  p->fn(regs, p->user);
}

void on_signal(int, siginfo_t *info, void *context) {
  if (info->si_code != SI_TIMER ||
      (info->si_value.sival_int & kCookieMask) != kCookie) {
    runtime::helpers::pass_on(g_chain, info, context, /*fault=*/false);
    return;
  }
  // Ours, maybe from a timer deleted while its signal was on the way.
  uint32_t index = static_cast<uint32_t>(info->si_value.sival_int & 0xFF);
  if (!g_active.load(std::memory_order_acquire) ||
      index >= g_nperiods.load(std::memory_order_acquire))
    return;
  int saved_errno = errno;
  // The kernel checks CPU-time timers at its tick: a period shorter than
  // the tick falls due several times by the time it looks, and the signal
  // says how many more (si_overrun). Each is a sample of where the thread
  // is: the probe runs once per expiration, up to kMaxReplays; the rest
  // are counted.
  uint64_t runs = 1 + static_cast<uint64_t>(std::max(info->si_overrun, 0));
  if (runs > kMaxReplays) {
    g_overruns.fetch_add(runs - kMaxReplays, std::memory_order_relaxed);
    runs = kMaxReplays;
  }
  // The registers afresh each time: a probe may write to its context.
  for (uint64_t i = 0; i < runs; i++)
    runtime::hook::dispatch_in_signal(context, run_period, &g_periods[index]);
  errno = saved_errno;
}

// Thread `tid`'s status file into buf (NUL-terminated); false if unreadable.
bool read_status(int32_t tid, char (&buf)[4096]) {
  std::string rel = "task/" + std::to_string(tid) + "/status";
  int fd = runtime::hook::MemoryMap::open_self(rel.c_str(), O_RDONLY);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = 0;
  return true;
}

// A signal mask field ("SigBlk:") of a status file; 0 if absent.
uint64_t status_mask(const char *status, const char *field) {
  const char *at = std::strstr(status, field);
  return at ? std::strtoull(at + std::strlen(field), nullptr, 16) : 0;
}

// Signals the process catches or ignores, or some thread blocks among
// others it does not (status files' SigCgt, SigIgn, SigBlk), as a mask of
// the first 64.
uint64_t signals_in_use(const std::vector<int32_t> &tids) {
  uint64_t used = 0;
  for (int32_t tid : tids) {
    char buf[4096];
    if (!read_status(tid, buf))
      continue;
    used |= status_mask(buf, "SigIgn:") | status_mask(buf, "SigCgt:");
    // A thread that blocks every real-time signal (sigfillset) says
    // nothing of one; one that blocks some does (sigwait on them).
    uint64_t blocked = status_mask(buf, "SigBlk:");
    uint64_t rt = ~uint64_t{0} << (SIGRTMIN - 1);
    if ((blocked & rt) != rt)
      used |= blocked;
  }
  return used;
}

// The highest real-time signal nobody handles, ignores or blocks now.
std::vector<int32_t> list_threads();

int choose_signal() {
  struct {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
  } current{};
  std::vector<int32_t> tids = list_threads();
  std::erase_if(tids, is_agent_thread); // they block every signal
  uint64_t used = signals_in_use(tids);
  for (int sig = SIGRTMAX; sig >= SIGRTMIN + 4; --sig)
    if (!((used >> (sig - 1)) & 1) &&
        raw_syscall(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&current),
                    8) == 0 &&
        current.handler == SIG_DFL)
      return sig;
  return 0;
}

// The threads of the process now.
std::vector<int32_t> list_threads() {
  std::vector<int32_t> tids;
  int fd = runtime::hook::MemoryMap::open_self("task", O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return tids;
  DIR *dir = fdopendir(fd);
  if (!dir) {
    close(fd);
    return tids;
  }
  while (struct dirent *d = readdir(dir))
    if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
      tids.push_back(static_cast<int32_t>(std::strtol(d->d_name, nullptr, 10)));
  closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

// Whether thread `tid` blocks `sig` now (its status file's SigBlk).
bool blocks(int32_t tid, int sig) {
  char buf[4096];
  return read_status(tid, buf) &&
         (status_mask(buf, "SigBlk:") >> (sig - 1)) & 1;
}

// Arms every listed thread not armed yet, drops the entries of threads
// gone. Under the lock. Returns the threads armed anew.
uint32_t sync_threads(const std::vector<int32_t> &tids, bool count_late) {
  uint32_t armed = 0;
  for (uint32_t k = 0; k < g_nused; k++) {
    Entry &e = g_table[g_used[k]];
    if (e.tid > 0 && !std::binary_search(tids.begin(), tids.end(), e.tid))
      erase(e);
  }
  for (int32_t tid : tids) {
    if (is_agent_thread(tid))
      continue;
    Entry *e = find(tid);
    if (e && e->state != ThreadArm::Pending)
      continue;
    if (!e)
      e = insert(tid);
    if (e && e->state == ThreadArm::Pending)
      g_pending.fetch_sub(1, std::memory_order_relaxed);
    // A thread that blocks the signal would hold it pending, where its
    // sigwait() or signalfd could take it for the program's own: left
    // alone, counted.
    if (e && blocks(tid, g_signal.load(std::memory_order_relaxed))) {
      e->state = ThreadArm::Blocked;
      g_blocked.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (!e || !arm(*e)) {
      g_untimed.fetch_add(1, std::memory_order_relaxed);
      if (e)
        e->state = ThreadArm::Failed;
      continue;
    }
    // Pending ones are late even at the first listing: they started under
    // a filter, after their start routine was due to arm them.
    if (count_late || e->state == ThreadArm::Pending) {
      g_late.fetch_add(1, std::memory_order_relaxed);
      e->late = true;
    }
    e->state = ThreadArm::Yes;
    armed++;
  }
  return armed;
}

// Too many tombstones make lookups long: the table is rebuilt. Under the
// lock, on the agent thread.
void compact() {
  if (g_tombstones < kCapacity / 4)
    return;
  std::vector<Entry> live;
  for (uint32_t k = 0; k < g_nused; k++) {
    Entry &e = g_table[g_used[k]];
    if (e.tid > 0)
      live.push_back(e);
    e.tid = 0;
  }
  g_nused = 0;
  g_tombstones = 0;
  for (const Entry &e : live)
    if (Entry *slot = insert(e.tid))
      *slot = e;
}

void fork_prepare() {
  lock();
}
void fork_parent() {
  unlock();
}
// The child has no timer (fork() does not copy them) and one thread.
void fork_child() {
  // Only the entries in use are written: the rest of the table stays
  // shared with the parent (a fork copies no page it does not write).
  for (uint32_t k = 0; k < g_nused; k++)
    g_table[g_used[k]].tid = 0;
  g_nused = 0;
  g_tombstones = 0;
  g_pending.store(0, std::memory_order_relaxed);
  // Under a filter (inherited) a timer call may kill the child.
  if (g_active.load(std::memory_order_acquire)) {
    Entry *e = runtime::helpers::sandboxed() ? nullptr : insert(current_tid());
    if (!e || !arm(*e))
      g_untimed.fetch_add(1, std::memory_order_relaxed);
  }
  unlock();
}

} // namespace

Result<Armed> add_period(uint64_t period_ns, runtime::hook::Handler fn,
                         void *user) {
  if (period_ns == 0)
    return make_error("a sampling period of 0");
  // The filter may be on this thread too, and may kill the process for a
  // timer call: no way to ask it safely.
  if (runtime::helpers::sandboxed())
    return make_error("the process runs under a seccomp filter, which may "
                      "forbid the timer calls profile probes need");
  if (!g_table) {
    g_table = new (std::nothrow) Entry[kCapacity]();
    g_used = new (std::nothrow) uint32_t[kCapacity];
    if (!g_table || !g_used)
      return make_error("no memory for the thread table");
    pthread_atfork(fork_prepare, fork_parent, fork_child);
  }
  if (g_signal.load() == 0) {
    int sig = choose_signal();
    if (sig == 0)
      return make_error("every real-time signal is handled, ignored or "
                        "blocked by the program: none is left for the "
                        "profiling timers");
    g_chain.sig = sig;
    g_signal.store(sig);
  }
  if (auto r = runtime::helpers::install_first(g_chain); !r)
    return make_error("cannot handle signal " + std::to_string(g_signal) +
                      ": " + r.error());
  lock();
  uint32_t n = g_nperiods.load(std::memory_order_relaxed);
  uint32_t index = n;
  for (uint32_t i = 0; i < n; i++)
    if (g_periods[i].period_ns == period_ns && g_periods[i].fn == fn &&
        g_periods[i].user == user)
      index = i;
  if (index == n) {
    if (n == kMaxPeriods) {
      unlock();
      return make_error("more than " + std::to_string(kMaxPeriods) +
                        " different profile periods");
    }
    g_periods[n] = {period_ns, fn, user};
    g_nperiods.store(n + 1, std::memory_order_release);
  }
  g_active.store(true, std::memory_order_release);
  // Threads armed before get the new period's timer; the others theirs.
  for (uint32_t k = 0; k < g_nused; k++)
    if (Entry &e = g_table[g_used[k]]; e.tid > 0 && e.state == ThreadArm::Yes)
      (void)arm(e);
  uint64_t blocked_before = g_blocked.load(std::memory_order_relaxed);
  std::vector<int32_t> tids = list_threads();
  uint32_t armed = sync_threads(tids, /*count_late=*/false);
  unlock();
  Armed out;
  out.threads = armed;
  out.blocked = static_cast<uint32_t>(
      g_blocked.load(std::memory_order_relaxed) - blocked_before);
  return out;
}

void stop() {
  if (!g_table)
    return;
  g_active.store(false, std::memory_order_release);
  // Under a filter on every thread the timers stay: deleting one may kill
  // the process. Their signals are ignored from now on.
  if (g_all_filtered.load(std::memory_order_acquire))
    return;
  lock();
  for (uint32_t k = 0; k < g_nused; k++) {
    Entry &e = g_table[g_used[k]];
    if (e.tid > 0)
      erase(e);
    e.tid = 0;
  }
  g_nused = 0;
  g_tombstones = 0;
  g_nperiods.store(0, std::memory_order_release);
  unlock();
}

void rescan(int every_ms) {
  // A filter on every thread (TSYNC) covers this one too: no timer call,
  // not even a read of /proc, is safe from here any more.
  if (!g_active.load(std::memory_order_acquire) ||
      g_all_filtered.load(std::memory_order_acquire))
    return;
  static uint64_t last_ns = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  if (g_pending.load(std::memory_order_relaxed) == 0 &&
      now - last_ns < uint64_t(every_ms) * 1000000ull)
    return;
  last_ns = now;
  std::vector<int32_t> tids = list_threads();
  if (tids.empty())
    return; // no /proc: only the wrapper arms threads
  lock();
  (void)sync_threads(tids, /*count_late=*/true);
  compact();
  unlock();
}

bool active() {
  return g_active.load(std::memory_order_acquire);
}

int signal_number() {
  return g_active.load(std::memory_order_acquire) ? g_signal.load() : 0;
}

bool filter_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old) {
  return sig != 0 && sig == g_signal.load() &&
         runtime::helpers::filter_sigaction(g_chain, act, old);
}

void thread_started() {
  if (!g_active.load(std::memory_order_acquire) || !g_table)
    return;
  // Under a seccomp filter a timer call may kill the process: the agent's
  // rescan arms the thread instead, from its thread that the filter does
  // not cover (or counts it, when it does).
  int32_t tid = current_tid();
  if (runtime::helpers::sandboxed()) {
    if (g_all_filtered.load(std::memory_order_acquire)) {
      g_untimed.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Noted for the rescan, which counts it if it ends unarmed; no timer
    // call here.
    lock();
    if (take_entry(tid, ThreadArm::Pending, /*may_syscall=*/false))
      g_pending.fetch_add(1, std::memory_order_relaxed);
    unlock();
    return;
  }
  // Blocking the signal already (a mask set before sampling started, and
  // inherited): left alone, as the rescan would.
  uint64_t mask = 0;
  int sig = g_signal.load(std::memory_order_relaxed);
  bool blocked = raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0,
                             reinterpret_cast<long>(&mask), 8) == 0 &&
                 ((mask >> (sig - 1)) & 1);
  lock();
  if (blocked) {
    if (take_entry(tid, ThreadArm::Blocked, /*may_syscall=*/true))
      g_blocked.fetch_add(1, std::memory_order_relaxed);
    unlock();
    return;
  }
  // An entry with this tid: a rescan listed this thread before it got
  // here (its timers run: it was not late after all), or a thread that
  // exited, its tid reused, before a rescan saw it go (a dead thread's CPU
  // timer reads as disarmed).
  Entry *old = find(tid);
  if (old && old->state == ThreadArm::Yes && timer_live(*old)) {
    if (old->late)
      g_late.fetch_sub(1, std::memory_order_relaxed);
    old->late = false;
    unlock();
    return;
  }
  Entry *e = take_entry(tid, ThreadArm::Yes, /*may_syscall=*/true);
  if (!e || !arm(*e)) {
    g_untimed.fetch_add(1, std::memory_order_relaxed);
    if (e)
      e->state = ThreadArm::Failed;
  }
  unlock();
}

void agent_thread_started() {
  int32_t tid = current_tid();
  for (auto &t : g_agent_tids) {
    int32_t expected = t.load(std::memory_order_relaxed);
    // A slot of an agent thread that ended may be reused: an exited
    // thread's tid cannot be a live program thread's for long, and a
    // program thread wrongly left out only goes unsampled.
    if (expected == 0 || expected == tid ||
        raw_syscall(SYS_tgkill, raw_syscall(SYS_getpid), expected, 0) != 0) {
      t.store(tid, std::memory_order_relaxed);
      break;
    }
  }
  if (!g_table)
    return;
  lock();
  if (Entry *e = find(tid))
    erase(*e);
  unlock();
}

void sandboxed(bool all_threads) {
  if (all_threads)
    g_all_filtered.store(true, std::memory_order_release);
}

bool all_filtered() {
  return g_all_filtered.load(std::memory_order_acquire);
}

Counters counters() {
  return {g_overruns.load(std::memory_order_relaxed),
          g_untimed.load(std::memory_order_relaxed),
          g_late.load(std::memory_order_relaxed),
          g_blocked.load(std::memory_order_relaxed)};
}

std::vector<int32_t> threads_now() {
  return list_threads();
}

bool is_agent_tid(int32_t tid) {
  return is_agent_thread(tid);
}

uint64_t blocked_signals(int32_t tid) {
  char buf[4096];
  return read_status(tid, buf) ? status_mask(buf, "SigBlk:") : 0;
}

} // namespace ubtrace::agent::profile
