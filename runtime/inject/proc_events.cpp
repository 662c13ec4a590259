#include "runtime/inject/proc_events.h"

#include "runtime/inject/sys_error.h"

#include <cerrno>
#include <cstring>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {

namespace {

// The subscription message: a netlink header, a connector header and the
// operation (Linux 6.6 added an event filter after it; the plain form
// works everywhere, and every event is sorted here).
bool send_op(int fd, uint32_t op) {
  alignas(nlmsghdr) char m[NLMSG_LENGTH(sizeof(cn_msg) + sizeof op)] = {};
  auto *header = reinterpret_cast<nlmsghdr *>(m);
  header->nlmsg_len = sizeof m;
  header->nlmsg_type = NLMSG_DONE;
  header->nlmsg_pid = 0; // the kernel assigned the port at bind
  auto *connector = static_cast<cn_msg *>(NLMSG_DATA(header));
  connector->id.idx = CN_IDX_PROC;
  connector->id.val = CN_VAL_PROC;
  connector->len = sizeof op;
  std::memcpy(connector->data, &op, sizeof op);
  return ::send(fd, m, sizeof m, 0) == static_cast<ssize_t>(sizeof m);
}

} // namespace

Result<ProcEvents> ProcEvents::open() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                       NETLINK_CONNECTOR));
  if (!fd.valid())
    return sys_error("the process events connector (netlink)", errno);
  // A larger buffer than the default rides out bursts (a build's execs)
  // while the reader injects; past it, overruns are counted.
  int size = 4 << 20;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  auto refused = [](const char *what) {
    int err = errno;
    return make_error(
        std::string("cannot ") + what +
        " the kernel's process events: " + std::strerror(err) +
        (err == EPERM ? " (they need root, in the initial namespaces)" : ""));
  };
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&address),
             sizeof address) != 0)
    return refused("listen to");
  if (!send_op(fd.get(), PROC_CN_MCAST_LISTEN))
    return refused("subscribe to");
  return ProcEvents(std::move(fd));
}

ProcEvents::~ProcEvents() {
  if (fd_.valid())
    (void)send_op(fd_.get(), PROC_CN_MCAST_IGNORE);
}

std::vector<ProcEvent> ProcEvents::read_now(size_t most) {
  std::vector<ProcEvent> out;
  alignas(nlmsghdr) char buffer[8192];
  while (out.size() < most) {
    ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ENOBUFS) { // dropped: the next read has what followed
        ++overruns_;
        continue;
      }
      break; // EAGAIN: nothing queued
    }
    // The datagram's messages, each checked against what was read.
    for (size_t at = 0; at + sizeof(nlmsghdr) <= size_t(n);) {
      const auto *h = reinterpret_cast<const nlmsghdr *>(buffer + at);
      if (h->nlmsg_len < sizeof(nlmsghdr) || at + h->nlmsg_len > size_t(n))
        break;
      at += NLMSG_ALIGN(h->nlmsg_len);
      if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_NOOP ||
          h->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_event)))
        continue;
      const auto *c = reinterpret_cast<const cn_msg *>(
          reinterpret_cast<const char *>(h) + NLMSG_HDRLEN);
      if (c->id.idx != CN_IDX_PROC || c->id.val != CN_VAL_PROC)
        continue;
      proc_event e;
      std::memcpy(&e, c->data, sizeof e);
      ProcEvent event;
      event.monotonic_ns = e.timestamp_ns;
      switch (e.what) {
      case proc_event::PROC_EVENT_EXEC:
        event.kind = ProcEvent::Kind::Exec;
        event.pid = e.event_data.exec.process_pid;
        event.tgid = e.event_data.exec.process_tgid;
        break;
      case proc_event::PROC_EVENT_FORK:
        event.kind = ProcEvent::Kind::Fork;
        event.pid = e.event_data.fork.child_pid;
        event.tgid = e.event_data.fork.child_tgid;
        event.parent_tgid = e.event_data.fork.parent_tgid;
        break;
      case proc_event::PROC_EVENT_EXIT:
        event.kind = ProcEvent::Kind::Exit;
        event.pid = e.event_data.exit.process_pid;
        event.tgid = e.event_data.exit.process_tgid;
        break;
      default:
        continue;
      }
      out.push_back(event);
    }
  }
  return out;
}

} // namespace ubtrace::runtime::inject
