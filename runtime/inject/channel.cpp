#include "runtime/inject/channel.h"

#include "runtime/agent/protocol.h"
#include "runtime/file_text.h"
#include "runtime/inject/sys_error.h"
#include "runtime/inject/unique_fd.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sstream>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

enum class Ready { Data, Hangup, ProcessExited, TimedOut };

Result<Ready> wait_ready(int fd, int exit_fd, const Deadline &deadline,
                         bool listening = false) {
  for (;;) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {exit_fd, POLLIN, 0}};
    int n = ::poll(fds, exit_fd >= 0 ? 2 : 1, deadline.remaining_ms());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sys_error("poll", errno);
    if (n == 0)
      return Ready::TimedOut;
    // A message already sent wins over the exit: a Hello followed by a
    // quick exit is still a Hello. A closed peer is readable too (EOF):
    // peek to tell the two apart.
    if (fds[0].revents & POLLIN) {
      if (listening)
        return Ready::Data; // a connection to accept
      char byte;
      ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0)
        return Ready::Data;
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        continue;
      return Ready::Hangup;
    }
    if (fds[0].revents & (POLLHUP | POLLERR))
      return Ready::Hangup;
    return Ready::ProcessExited;
  }
}

Result<sockaddr_un> make_address(const std::string &address,
                                 socklen_t *length) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.empty())
    return make_error("empty socket address");
  if (address.size() >= sizeof addr.sun_path)
    return make_error("socket address too long: " + address);
  std::memcpy(addr.sun_path, address.data(), address.size());
  bool abstract = address[0] == '@';
  if (abstract)
    addr.sun_path[0] = '\0';
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                   address.size() + (abstract ? 0 : 1));
  return addr;
}

// The inode of namespace `kind` ("net", "pid", "user") of process `who`
// ("self" or a pid); 0 when it cannot be read.
ino_t ns_inode(const std::string &who, const char *kind) {
  struct stat st{};
  std::string path = "/proc/" + who + "/ns/" + kind;
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool other_namespace(pid_t pid, const char *kind) {
  ino_t ours = ns_inode("self", kind);
  ino_t theirs = ns_inode(std::to_string(pid), kind);
  return ours && theirs && ours != theirs;
}

// Our effective uid as process `pid` sees it: its user namespace's
// uid_map (read by us, "outside" is ours), else the overflow uid.
uint32_t uid_seen_by(pid_t pid) {
  uint32_t uid = static_cast<uint32_t>(::geteuid());
  if (!other_namespace(pid, "user"))
    return uid;
  if (auto map = read_file("/proc/" + std::to_string(pid) + "/uid_map")) {
    std::stringstream lines(*map);
    uint64_t inside, outside, count;
    while (lines >> inside >> outside >> count)
      if (uid >= outside && uid - outside < count)
        return static_cast<uint32_t>(inside + (uid - outside));
  }
  auto overflow = read_file("/proc/sys/kernel/overflowuid");
  return overflow ? static_cast<uint32_t>(
                        std::strtoul(overflow->c_str(), nullptr, 10))
                  : 65534;
}

// Our pid as process `pid` sees it: 0 when we are outside its PID
// namespace (it runs in one of its own, below ours).
uint32_t pid_seen_by(pid_t pid) {
  return other_namespace(pid, "pid") ? 0 : static_cast<uint32_t>(::getpid());
}

} // namespace

Result<std::string> random_hex128() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sys_error("getrandom", errno);
    got += size_t(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string inject_entry_failure(int code) {
  switch (code) {
  case agent::kInjectNoCli:
    return "nothing listened where the agent was told to connect";
  case agent::kInjectBadArgument:
    return "the agent did not understand where to connect: a different "
           "ubtrace version?";
  case agent::kInjectWrongPeer:
    return "the socket the agent reached did not belong to this ubtrace";
  default:
    return "code " + std::to_string(code);
  }
}

bool channel_closed(int fd) {
  pollfd p{fd, POLLIN, 0};
  int n;
  do
    n = ::poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return n < 0;
  if (p.revents & POLLNVAL)
    return true;
  if (!(p.revents & POLLIN))
    return (p.revents & (POLLHUP | POLLERR)) != 0;
  char byte;
  ssize_t got = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
}

Result<void> AgentChannel::wait_readable(const Deadline &deadline,
                                         int exit_fd) {
  auto ready = wait_ready(fd_.get(), exit_fd, deadline);
  if (!ready)
    return std::move(ready).take_error();
  switch (*ready) {
  case Ready::Data:
    return {};
  case Ready::Hangup:
    return make_error("the agent channel closed before the agent spoke");
  case Ready::ProcessExited:
    return make_error("the process exited before the agent spoke");
  case Ready::TimedOut:
    return make_error("timed out waiting for the agent");
  }
  return {};
}

Result<AgentListener> AgentListener::create_for(pid_t pid) {
  // A name already taken is somebody else's socket (a collision of 128
  // random bits is not): try another.
  for (int attempt = 0;; ++attempt) {
    auto suffix = random_hex128();
    if (!suffix)
      return std::move(suffix).take_error();
    std::string address = "@" + std::string(agent::kSocketPrefix) +
                          std::to_string(pid) + "." + *suffix;
    // An abstract name belongs to the network namespace the socket is
    // made in: for a process in another one (a container), the socket is
    // made in its namespace, by a thread of ours that enters it and ends.
    std::optional<Result<AgentListener>> made;
    int err = 0;
    if (pid != ::getpid() && other_namespace(pid, "net")) {
      std::thread([&] {
        UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(),
                           O_RDONLY | O_CLOEXEC));
        if (!ns.valid() || ::setns(ns.get(), CLONE_NEWNET) != 0) {
          err = errno;
          made.emplace(sys_error("cannot listen in the network namespace of "
                                 "process " +
                                     std::to_string(pid),
                                 err));
          return;
        }
        made.emplace(create_at(address));
        err = errno;
      }).join();
    } else {
      made.emplace(create_at(address));
      err = errno;
    }
    if (*made)
      (*made)->target_ = pid;
    if (*made || err != EADDRINUSE || attempt == 8)
      return std::move(*made);
  }
}

std::string AgentListener::entry_argument() const {
  agent::AttachArgument a;
  a.address = address_;
  a.cli_pid = target_ ? pid_seen_by(target_) : uint32_t(::getpid());
  a.cli_uid = target_ ? uid_seen_by(target_) : uint32_t(::geteuid());
  return agent::encode_attach_argument(a);
}

Result<AgentListener> AgentListener::create_at(const std::string &address) {
  socklen_t length = 0;
  auto addr = make_address(address, &length);
  if (!addr)
    return std::move(addr).take_error();
  // Non-blocking: accept() after poll() must not hang on a connection that
  // went away in between. Accepted sockets are blocking again.
  UniqueFd fd(
      ::socket(AF_UNIX, kAgentChannelType | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid())
    return sys_error("socket", errno);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&*addr), length) !=
      0) {
    int err = errno;
    auto error = sys_error("cannot listen on " + address, err);
    errno = err;
    return error;
  }
  // Room for a burst of --follow's programs connecting at once (each
  // waits in connect() while the backlog is full).
  if (::listen(fd.get(), 64) != 0)
    return sys_error("listen on " + address, errno);
  return AgentListener(std::move(fd), address);
}

AgentListener::~AgentListener() {
  if (fd_.valid() && !address_.empty() && address_[0] != '@')
    ::unlink(address_.c_str());
}

Result<AgentChannel> AgentListener::accept(pid_t pid, const Deadline &deadline,
                                           int exit_fd) {
  for (;;) {
    auto ready = wait_ready(fd_.get(), exit_fd, deadline, true);
    if (!ready)
      return std::move(ready).take_error();
    switch (*ready) {
    case Ready::Data:
      break;
    case Ready::Hangup:
      return make_error("the listening socket " + address_ + " failed");
    case Ready::ProcessExited:
      return make_error("process " + std::to_string(pid) +
                        " exited before its agent connected");
    case Ready::TimedOut:
      return make_error("timed out waiting for the agent of process " +
                        std::to_string(pid) + " to connect to " + address_);
    }
    UniqueFd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
        continue;
      return sys_error("accept on " + address_, errno);
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        cred.pid != pid)
      continue; // not the target: drop it, keep waiting
    return AgentChannel(std::move(conn));
  }
}

std::optional<AgentChannel> AgentListener::accept_now(pid_t &pid) {
  for (;;) {
    UniqueFd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      return std::nullopt; // EAGAIN: none waits (or the listener failed)
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
      continue;
    pid = cred.pid;
    return AgentChannel(std::move(conn));
  }
}

} // namespace ubtrace::runtime::inject
