// Sampled processes, pinned (see process_pins.h).
#include "backends/userspace/process_pins.h"

#include "runtime/helpers/process_facts.h"
#include "runtime/proc_stat.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace ubtrace::backends {

namespace {

// Pins held at once (two descriptors each); past it, those no sample of
// this pass needs go first.
constexpr size_t kMaxPins = 512;

// A process's start from /proc/PID/stat (clock ticks since boot) as the
// samples' clock says it, rounded down: no later than it started.
uint64_t start_floor(unsigned long long ticks) {
  static const long hz = std::max(1L, sysconf(_SC_CLK_TCK));
  uint64_t boot = uint64_t(ticks) * uint64_t(1'000'000'000 / hz);
  uint64_t to_monotonic = runtime::helpers::clock_ns(CLOCK_BOOTTIME) -
                          runtime::helpers::clock_ns(CLOCK_MONOTONIC);
  // The two clocks are read apart: a millisecond covers that.
  uint64_t slack = to_monotonic + 1'000'000;
  return boot > slack ? boot - slack : 0;
}

void close_pin(ProcessPin &pin) {
  if (pin.memfd >= 0)
    close(pin.memfd);
  if (pin.pidfd >= 0)
    close(pin.pidfd);
  forget_pinned(pin.key);
  pin = {};
}

} // namespace

ProcessPins::~ProcessPins() {
  for (auto &[pid, held] : held_)
    close_pin(held.pin);
}

void ProcessPins::began(uint32_t pid, uint64_t time, bool process) {
  if (began_.size() > 65536) // the stat floor is left to bound them
    began_.clear();
  Began &b = began_[pid];
  b.image = std::max(b.image, time);
  if (process)
    b.process = std::max(b.process, time);
}

bool ProcessPins::needs_pin(uint32_t pid) {
  auto it = held_.find(pid);
  if (it == held_.end())
    return true;
  Held &h = it->second;
  if (auto b = began_.find(pid); b != began_.end() && b->second.image > h.made)
    return true;
  if (h.kind != Held::Pinned)
    return h.pass != pass_;
  h.pass = pass_;
  return pidfd_ended(h.pin.pidfd);
}

void ProcessPins::pin(uint32_t pid) {
  forget(pid);
  if (held_.size() >= kMaxPins) {
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->second.pass != pass_) {
        close_pin(it->second.pin);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
  Held h;
  h.pass = pass_;
  h.made = runtime::helpers::clock_ns(CLOCK_MONOTONIC);
  errno = EMFILE; // when the pins are all in use
  long fd = held_.size() < kMaxPins ? syscall(SYS_pidfd_open, pid, 0) : -1;
  if (fd < 0) {
    // No process has the number (ESRCH), or no pin can be made: then the
    // number alone, as before pins.
    h.kind = errno == ESRCH ? Held::Gone : Held::Unpinned;
    held_[pid] = h;
    return;
  }
  h.pin.pidfd = int(fd);
  h.pin.key = next_key_++;
  // Both read while the pidfd's process lives are of it.
  h.pin.memfd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(),
                     O_RDONLY | O_CLOEXEC);
  auto st = read_proc_stat(pid_t(pid));
  if (!st || pidfd_ended(h.pin.pidfd)) {
    close_pin(h.pin);
    h.kind = Held::Gone;
  } else {
    h.kind = Held::Pinned;
    h.floor = start_floor(st->start_time);
    // A kernel thread's mem reads nothing, as an ended process's would:
    // its reads go by number (and fail) instead of counting as gone.
    if ((pid == 2 || st->ppid == 2) && h.pin.memfd >= 0) {
      close(h.pin.memfd);
      h.pin.memfd = -1;
    }
    h.image_gone = h.pin;
    h.image_gone.memfd = -1;
    h.image_gone.image_gone = true;
  }
  held_[pid] = h;
}

const ProcessPin *ProcessPins::of(uint32_t pid, uint64_t time) {
  auto it = held_.find(pid);
  if (it == held_.end()) { // not seen before handling: pinned late
    pin(pid);
    it = held_.find(pid);
  }
  const Held &h = it->second;
  if (h.kind == Held::Unpinned)
    return nullptr;
  if (h.kind == Held::Gone)
    return &kProcessGone;
  Began b;
  if (auto it_b = began_.find(pid); it_b != began_.end())
    b = it_b->second;
  if (time < std::max(h.floor, b.process))
    return &kProcessGone;
  return time < b.image ? &h.image_gone : &h.pin;
}

uint64_t ProcessPins::image_began(uint32_t pid) const {
  auto it = began_.find(pid);
  return it == began_.end() ? 0 : it->second.image;
}

void ProcessPins::forget(uint32_t pid) {
  if (auto it = held_.find(pid); it != held_.end()) {
    close_pin(it->second.pin);
    held_.erase(it);
  }
}

} // namespace ubtrace::backends
