// A descriptor the agent owns inside a process whose descriptor table is the
// program's. The program may close it at any moment (close_range(3, ~0U) or
// a close-everything loop, as daemons do when they start) and reuse the
// number for its own files, or dup2() its own over it; a forked child holds
// a copy. Writing to the number then puts the agent's bytes into the
// program's sockets, reading takes the program's data, closing closes the
// program's file. So every descriptor of the agent is an OwnedFd:
//
//   - adopt() moves it to a high number (F_DUPFD_CLOEXEC near the soft
//     RLIMIT_NOFILE, where programs rarely reach: their new descriptors take
//     the lowest free numbers; but below 1024 whatever the limit: the
//     kernel's table grows to the highest number in use, and every fork and
//     vfork copies it whole and the child's exit frees it. Near a soft
//     limit of 20000 that was 32768 slots, and a traced program's vfork
//     took 117 us where it takes 23) and records what it is (st_dev and st_ino:
//     unique for sockets, pipes and memfds; the agent never owns the shared
//     anonymous inode of an eventfd or epoll) and which process adopted it;
//   - usable() is called right before every system call on it: false once
//     the number names something else (or nothing), and from then on (the
//     loss is sticky); false without forgetting it in another process (a
//     forked or vforked child sharing this memory must not make the parent
//     lose it);
//   - close() closes only a descriptor that is still the agent's;
//   - in a forked child, forget_in_child() (pthread_atfork) closes the
//     child's copies, which would otherwise keep the CLI's end open after the
//     traced process is gone, and make the child write into the parent's
//     channel.
//
// What remains: the program can swap the number in the microseconds between
// usable() and the system call it guards; a descriptor received over the
// channel (SCM_RIGHTS) lands at the lowest free number until adopt() moves
// it. Both need the program to close and reuse the agent's descriptor within
// that instant.
#pragma once

#include <atomic>
#include <sys/types.h>

namespace ubtrace::agent {

class OwnedFd {
public:
  OwnedFd() = default;
  // `fd` must be the agent's (just created or received). Invalid (and `fd`
  // closed) if it cannot be identified.
  static OwnedFd adopt(int fd);
  OwnedFd(OwnedFd &&other) noexcept;
  OwnedFd &operator=(OwnedFd &&other) noexcept;
  OwnedFd(const OwnedFd &) = delete;
  OwnedFd &operator=(const OwnedFd &) = delete;
  ~OwnedFd(); // forgets, never closes: call close()

  int get() const { return fd_.load(std::memory_order_acquire); }
  bool valid() const { return get() >= 0; }
  // Still the agent's, in the process that adopted it.
  bool usable();
  // Whether it was the agent's and the program took the number.
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  void close();
  // A forked child's copy: closed if it is still ours, then forgotten.
  void forget_in_child();

private:
  void forget();
  std::atomic<int> fd_{-1};
  std::atomic<bool> lost_{false};
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  pid_t owner_ = 0;
};

// Closes, in a forked child, every OwnedFd alive in the parent (each one
// registers itself while valid). Registered with pthread_atfork once, off
// the probe path (agent start); idempotent.
void forget_owned_fds_after_fork();

} // namespace ubtrace::agent
