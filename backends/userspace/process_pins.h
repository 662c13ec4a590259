// Which process a system-wide sample's pid was, held (system_sampler.h).
// The CLI handles a sample milliseconds after the kernel took it; by then
// its process may have ended and its number gone to another (pid_max is
// 32768 by default, and a fork loop goes round it in seconds), or it may
// have exec'd. A memory read, /proc fact or signal by number would then
// reach the wrong process, so each sampled process is pinned: a pidfd,
// and its memory as /proc/PID/mem opened then (which keeps to that image
// and reads nothing once it ends or execs).
//
// Which samples a pin is good for comes from the kernel's own records,
// read after the pin was made: a pin made at time M is of the process
// that had the number at M, which began at the last new process of that
// number (a fork record with pid == tid) before M, and no earlier than
// its start in /proc/PID/stat (clock ticks: the bound when records were
// lost); its image began at its last exec (a comm record marked exec)
// before M. A sample taken before its process began is of an earlier
// one, gone: its reads fail (counted), nothing is sent to it. A sample
// taken before its image began is of this process but not of what its
// memory holds now: signals and /proc facts go to it, reads fail
// (counted). The sampler reads the rings once more after pinning
// (SystemSampler::drain), so every record from before M is in hand when
// its samples are handled; a record after M means the pin's process or
// image ended, and the pin is made again.
#pragma once

#include "backends/userspace/foreign_task.h"

#include <cstdint>
#include <unordered_map>

namespace ubtrace::backends {

class ProcessPins {
public:
  ProcessPins() = default;
  ~ProcessPins();
  ProcessPins(const ProcessPins &) = delete;
  ProcessPins &operator=(const ProcessPins &) = delete;

  // A record said a process (a fork of one) or only an image (an exec)
  // of `pid` began at `time` (the samples' clock, CLOCK_MONOTONIC).
  void began(uint32_t pid, uint64_t time, bool process);
  // Whether samples of `pid` need a pin made now: none yet, its process
  // ended, an image began after it was made, or the number had no
  // process at the last pass.
  bool needs_pin(uint32_t pid);
  // Pins what has the number `pid` now, in place of its old pin.
  void pin(uint32_t pid);
  // A new pass: pins found without a process are tried again.
  void next_pass() { pass_++; }
  // The pin a sample of `pid` taken at `time` acts through: its process's
  // pin; &kProcessGone where that process ended before the pin, its
  // image_gone view where only its image did; null where no pin could be
  // made (no file descriptor left, say): the number alone, as without
  // pins.
  const ProcessPin *of(uint32_t pid, uint64_t time);
  // When the latest process or image of `pid` the records told of began
  // (0: none told).
  uint64_t image_began(uint32_t pid) const;
  // The process of `pid` ended: its pin goes.
  void forget(uint32_t pid);

private:
  struct Held {
    enum Kind { Pinned, Gone, Unpinned } kind = Gone;
    ProcessPin pin, image_gone; // the second: no memory, image_gone
    uint64_t made = 0;          // when the pin was made
    uint64_t floor = 0; // its start per /proc, less the tick it hides in
    uint64_t pass = 0;
  };
  std::unordered_map<uint32_t, Held> held_;
  struct Began {
    uint64_t process = 0, image = 0; // the latest of each
  };
  std::unordered_map<uint32_t, Began> began_;
  uint64_t next_key_ = uint64_t(1) << 32;
  uint64_t pass_ = 0;
};

} // namespace ubtrace::backends
