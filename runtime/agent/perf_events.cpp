#include "runtime/agent/perf_events.h"

#include "runtime/agent/profile.h"
#include "runtime/agent/raw_syscall.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/hook/site_bindings.h"
#include "runtime/hook/trap_handler.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <mutex>
#include <string>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::agent::perf {
namespace {

// A probe on an event: it runs every `every` samples of its event's
// thread. Probes of one event share it (its period the gcd of their
// counts): two events of one thread overflowing on the same fault would
// send two SIGTRAPs, and the second, not queued, would be lost.
struct Listener {
  runtime::hook::Handler fn = nullptr;
  void *user = nullptr;
  uint32_t event = 0; // index in g_events
  uint64_t every = 1;
};
struct Event {
  EventConfig what;
  uint64_t period = 0;
  bool in_kernel = false;
  uint32_t threads = 0; // given it when opened
};
Event g_events[kMaxEvents];
uint32_t g_nevent_slots = 0; // agent thread, under g_fds_mu
Listener g_listeners[kMaxEvents];
std::atomic<uint32_t> g_nevents{0}; // listeners published
// Each thread's samples of each event so far (listeners fire on theirs).
__thread uint64_t t_samples[kMaxEvents]
    __attribute__((tls_model("initial-exec")));
std::atomic<bool> g_active{false};
std::atomic<uint64_t> g_closed{0}, g_nested{0}, g_unarmed{0};

// Set while this thread handles one of our traps: an event the handler
// itself causes (a page fault on a stack or state page it touches first)
// sends another SIGTRAP at once, and the handler, installed to let traps
// nest, would recurse through fresh pages until the stack ran out. Those
// are dropped, and counted.
__thread bool t_in_trap __attribute__((tls_model("initial-exec")));

// The descriptors opened, with the id the kernel gave each event: a
// descriptor that no longer answers with that id was taken by the program.
struct Fd {
  int fd;
  uint64_t id;
  bool lost;
};
std::mutex g_fds_mu; // agent thread only (add_event, check, stop)
std::vector<Fd> g_fds;

// The probes of event `*user` whose turn this sample is, in the order
// they were attached.
void run_event(runtime::hook::PtRegs *regs, void *user) {
  if (!g_active.load(std::memory_order_acquire))
    return;
  const uint32_t event = *static_cast<const uint32_t *>(user);
  const uint64_t sample = ++t_samples[event];
  const uint32_t n = g_nevents.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    const Listener &l = g_listeners[i];
    if (l.event == event && sample % l.every == 0)
      l.fn(regs, l.user);
  }
}

uint32_t g_event_ids[kMaxEvents]; // i at [i]: run_event's argument

// On the thread the event overflowed on (the hook runtime's SIGTRAP
// handler): its probes, with the registers the trap interrupted.
void on_trap(uint64_t sig_data, void *context) {
  const uint32_t index = static_cast<uint32_t>(sig_data & 0xff);
  if (!g_active.load(std::memory_order_acquire) || index >= kMaxEvents)
    return;
  if (t_in_trap) {
    g_nested.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // An agent thread created by a sampled one inherited its event.
  if (profile::is_agent_tid(static_cast<int32_t>(raw_syscall(SYS_gettid))))
    return;
  t_in_trap = true;
  runtime::hook::dispatch_in_signal(context, run_event, &g_event_ids[index]);
  t_in_trap = false;
}

// The descriptors the events may take from the program's table: a quarter
// of its limit. One per thread alive at the attach, each in the program's
// table: a process with a thousand threads would otherwise lose every
// descriptor it may still open.
size_t descriptor_budget() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 1024;
  return size_t(limit.rlim_cur / 4);
}

long open_event(perf_event_attr &attr, int32_t tid) {
  return syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

std::string paranoid_level() {
  int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "?";
  char buf[16] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  std::string s(buf, n > 0 ? size_t(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s.empty() ? "?" : s;
}

std::string why_not(int err, uint32_t type, bool in_kernel) {
  if (type == PERF_TYPE_BREAKPOINT) {
    if (err == ENOSPC)
      return "the threads' debug registers are taken (four on x86-64: by "
             "other watchpoints, or a debugger)";
    if (err == ENOENT || err == EOPNOTSUPP)
      return "this machine has no hardware breakpoints the kernel can use";
    if (err == EINVAL)
      return "the kernel refuses a hardware breakpoint at that address, "
             "length and mode";
  }
  if (type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP))
    return "this machine has no hardware performance counters the kernel "
           "can use (a virtual machine without a virtual PMU, say)";
  if ((err == EACCES || err == EPERM) && in_kernel)
    return "the event happens in the kernel, which the traced process may "
           "not count: kernel.perf_event_paranoid is " +
           paranoid_level() +
           " (it needs 1 or lower, or CAP_PERFMON in the traced process)";
  if (err == EACCES || err == EPERM)
    return "the kernel refuses perf events here: kernel.perf_event_paranoid "
           "is " +
           paranoid_level() +
           " (a process may count its own events when it is 2 or lower, or "
           "with CAP_PERFMON)";
  if (err == EMFILE || err == ENFILE)
    return "the process has no file descriptor left for it";
  if (err == ENOSYS)
    return "this kernel has no perf events";
  if (err == EINVAL)
    return "this kernel cannot send a thread its own perf event as a signal "
           "(sigtrap needs Linux 5.13)";
  return std::strerror(err);
}

// Whether this machine's hardware breakpoints fire: one on a word of the
// agent's, counted while the agent's thread writes it. A virtual machine
// may take the breakpoints and never pass them on, and watchpoints that
// never fire would trace nothing without a word said. Agent thread.
bool breakpoints_fire() {
  static int known = -1;
  if (known >= 0)
    return known;
  alignas(8) static volatile uint64_t word;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_W;
  attr.bp_addr = reinterpret_cast<uint64_t>(&word);
  attr.bp_len = sizeof word;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = open_event(attr, 0);
  if (fd < 0)
    return true; // the probe's own open says why
  word = word + 1;
  uint64_t hits = 0;
  if (read(int(fd), &hits, sizeof hits) != ssize_t(sizeof hits))
    hits = 0;
  close(int(fd));
  known = hits > 0 ? 1 : 0;
  return known;
}

} // namespace

Result<uint32_t> add_event(const EventConfig &what, uint64_t period,
                           uint64_t count, bool in_kernel,
                           runtime::hook::Handler fn, void *user) {
  const uint32_t type = what.type;
  std::lock_guard<std::mutex> lock(g_fds_mu);
  const uint32_t listener = g_nevents.load(std::memory_order_relaxed);
  if (listener >= kMaxEvents)
    return make_error("at most " + std::to_string(kMaxEvents) +
                      " software, hardware and watchpoint probes at once");
  if (period == 0 || count % period != 0)
    return make_error("a count that is no multiple of its event's period");
  // The filter may be on this thread too, and may kill the process for
  // perf_event_open: no way to ask it safely.
  if (runtime::helpers::sandboxed())
    return make_error("the process runs under a seccomp filter, which may "
                      "forbid the perf_event_open calls these probes need");
  if (type == PERF_TYPE_BREAKPOINT && !breakpoints_fire())
    return make_error(
        "this machine's hardware breakpoints do not fire (one on the "
        "agent's own memory counted nothing: a virtual machine that does "
        "not pass the debug registers on, say)");
  uint32_t index = 0;
  while (index < g_nevent_slots &&
         !(g_events[index].what == what && g_events[index].period == period &&
           g_events[index].in_kernel == in_kernel))
    index++;
  const bool open_it = index == g_nevent_slots;
  if (auto r = runtime::hook::install_trap_handlers(); !r)
    return make_error("cannot take SIGTRAP: " + r.error());
  runtime::hook::set_perf_trap_handler(on_trap);
  g_listeners[listener] = {fn, user, index, count / period};
  g_nevents.store(listener + 1, std::memory_order_release);
  g_active.store(true, std::memory_order_release);
  if (!open_it)
    return g_events[index].threads;
  g_events[index] = {what, period, in_kernel, 0};
  g_event_ids[index] = index;
  g_nevent_slots++;

  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = what.config;
  attr.config1 = what.config1; // a breakpoint's bp_addr
  attr.config2 = what.config2; // and bp_len
  if (type == PERF_TYPE_BREAKPOINT) {
    attr.config = 0;
    attr.bp_type = uint32_t(what.config);
  }
  attr.sample_period = period;
  attr.inherit = 1;
  attr.inherit_thread = 1;
  attr.remove_on_exec = 1;
  attr.sigtrap = 1;
  attr.sig_data = uint64_t(runtime::hook::kPerfTrapCookie) << 32 | index;
  attr.exclude_hv = 1;
  attr.exclude_kernel = in_kernel ? 0 : 1;
  attr.exclude_callchain_kernel = 1;
  uint32_t threads = 0, unarmed = 0;
  int first_error = 0;
  const size_t budget = descriptor_budget();
  for (int32_t tid : profile::threads_now()) {
    if (profile::is_agent_tid(tid))
      continue;
    if (g_fds.size() >= budget) {
      unarmed++;
      continue;
    }
    long fd = open_event(attr, tid);
    if (fd < 0) {
      if (errno == ESRCH)
        continue; // the thread ended meanwhile
      if (!first_error)
        first_error = errno;
      unarmed++;
      continue;
    }
    uint64_t id = 0;
    ioctl(int(fd), PERF_EVENT_IOC_ID, &id);
    g_fds.push_back({int(fd), id, false});
    threads++;
  }
  if (threads == 0 && first_error) {
    g_nevents.store(listener, std::memory_order_release);
    g_nevent_slots--;
    return make_error(why_not(first_error, type, in_kernel));
  }
  g_unarmed.fetch_add(unarmed, std::memory_order_relaxed);
  g_events[index].threads = threads;
  return threads;
}

void stop() {
  std::lock_guard<std::mutex> lock(g_fds_mu);
  g_active.store(false, std::memory_order_release);
  g_nevents.store(0, std::memory_order_release);
  g_nevent_slots = 0;
  // Under a filter on every thread the events stay open: a close or an
  // ioctl may kill the process. Their SIGTRAPs are ignored from now on.
  if (profile::all_filtered()) {
    g_fds.clear();
    return;
  }
  for (Fd &f : g_fds) {
    uint64_t id = 0;
    // Only a descriptor still naming our event is ours to close.
    if (!f.lost && ioctl(f.fd, PERF_EVENT_IOC_ID, &id) == 0 && id == f.id)
      close(f.fd);
  }
  g_fds.clear();
}

bool active() {
  return g_active.load(std::memory_order_relaxed);
}

void check(int every_ms) {
  static uint64_t last_ms = 0;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now_ms =
      uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
  if (now_ms - last_ms < uint64_t(every_ms))
    return;
  last_ms = now_ms;
  if (profile::all_filtered())
    return; // no ioctl from here any more: it may kill the process
  std::lock_guard<std::mutex> lock(g_fds_mu);
  for (Fd &f : g_fds) {
    if (f.lost)
      continue;
    uint64_t id = 0;
    if (ioctl(f.fd, PERF_EVENT_IOC_ID, &id) != 0 || id != f.id) {
      f.lost = true;
      g_closed.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

Counters counters() {
  return {g_closed.load(std::memory_order_relaxed),
          g_nested.load(std::memory_order_relaxed),
          g_unarmed.load(std::memory_order_relaxed)};
}

} // namespace ubtrace::agent::perf
