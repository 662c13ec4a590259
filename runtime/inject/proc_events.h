// The kernel's process events connector (NETLINK_CONNECTOR, CN_IDX_PROC):
// every exec, fork and exit on the machine, told as it happens. It is how
// a system-wide trace learns of a program it must take on the moment the
// program starts, without polling /proc (issue: system-wide probes).
//
// The kernel takes listeners only from the initial user and PID
// namespaces, with CAP_NET_ADMIN: open() says so when it cannot. Events
// come as datagrams on a socket whose buffer may fill when the machine
// execs faster than the reader reads; the kernel then drops them and the
// next read fails with ENOBUFS, counted in overruns(): whoever relies on
// the events must then look at /proc again for what it missed.
//
// Each event carries the kernel's CLOCK_MONOTONIC time of the event
// (ktime_get_ns), so the delay from an exec to its reading is known.
#pragma once

#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"

#include <cstdint>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

struct ProcEvent {
  enum class Kind { Exec, Fork, Exit };
  Kind kind = Kind::Exec;
  pid_t pid = 0;             // the thread (for Fork: the child's)
  pid_t tgid = 0;            // its process (for Fork: the child's)
  pid_t parent_tgid = 0;     // Fork only
  uint64_t monotonic_ns = 0; // when it happened (CLOCK_MONOTONIC)
};

class ProcEvents {
public:
  // Subscribes; the error names the reason (root and the initial
  // namespaces needed).
  static Result<ProcEvents> open();

  // Readable when events are queued (for poll).
  int fd() const { return fd_.get(); }
  // What is queued now, at most `most`; never blocks. Events of other
  // kinds (uid changes, comm changes, ...) are passed over.
  std::vector<ProcEvent> read_now(size_t most = 256);
  // Times the kernel dropped events because the socket's buffer was full.
  uint64_t overruns() const { return overruns_; }

  ProcEvents(ProcEvents &&) = default;
  ProcEvents &operator=(ProcEvents &&) = default;
  ~ProcEvents(); // unsubscribes

private:
  explicit ProcEvents(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
  uint64_t overruns_ = 0;
};

} // namespace ubtrace::runtime::inject
