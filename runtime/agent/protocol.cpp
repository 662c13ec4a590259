#include "runtime/agent/protocol.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace ubtrace::agent {

// Messages are small (programs are the largest, a few tens of KB).
static constexpr size_t kMaxMessage = 16u << 20;

namespace {

// A timeout that spans several receives; < 0: none.
class Deadline {
public:
  explicit Deadline(int timeout_ms) : forever_(timeout_ms < 0) {
    clock_gettime(CLOCK_MONOTONIC, &at_);
    at_.tv_sec += timeout_ms / 1000;
    at_.tv_nsec += long(timeout_ms % 1000) * 1000000;
    if (at_.tv_nsec >= 1000000000) {
      at_.tv_sec++;
      at_.tv_nsec -= 1000000000;
    }
  }
  int remaining_ms() const {
    if (forever_)
      return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t(at_.tv_sec) - now.tv_sec) * 1000 +
                 (at_.tv_nsec - now.tv_nsec) / 1000000;
    return ms < 0 ? 0 : int(ms);
  }

private:
  bool forever_;
  struct timespec at_{};
};

} // namespace

namespace {

// Runs before each system call on the channel: false stops the exchange
// (the descriptor is not the agent's any more). Null for the CLI's side.
using Guard = OwnedFd *;

bool still_ours(Guard guard) {
  return !guard || guard->usable();
}

Result<void> send_core(int sock, const Message &m, Guard guard) {
  MsgHeader h{static_cast<uint32_t>(m.type),
              static_cast<uint32_t>(m.payload.size())};
  std::vector<uint8_t> buf(sizeof h + m.payload.size());
  std::memcpy(buf.data(), &h, sizeof h);
  if (!m.payload.empty())
    std::memcpy(buf.data() + sizeof h, m.payload.data(), m.payload.size());
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (m.fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &m.fd, sizeof(int));
  }
  bool grown = false;
  for (;;) {
    if (!still_ours(guard))
      return make_error(kChannelLost);
    ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(buf.size()))
      return {};
    if (n < 0 && errno == EINTR)
      continue;
    // A SEQPACKET message must fit the sender's buffer (212992 bytes by
    // default): a large program or code image asks for more, as far as
    // net.core.wmem_max lets it.
    if (n < 0 && errno == EMSGSIZE && !grown) {
      grown = true;
      int want = static_cast<int>(
          std::min<size_t>(buf.size() + (64u << 10), INT32_MAX));
      (void)setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
      continue;
    }
    if (n < 0 && errno == EMSGSIZE) {
      int have = 0;
      socklen_t len = sizeof have;
      (void)getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &have, &len);
      return make_error(
          "cannot send a message of " + std::to_string(buf.size()) +
          " bytes to the agent: the channel carries at most about " +
          std::to_string(have / 2) +
          " (raise sysctl net.core.wmem_max, or make the probe smaller)");
    }
    return make_error(std::string("cannot send to the agent channel: ") +
                      (n < 0 ? std::strerror(errno) : "short write"));
  }
}

void close_received(const struct msghdr &msg) {
  for (const struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
       c = CMSG_NXTHDR(const_cast<struct msghdr *>(&msg),
                       const_cast<struct cmsghdr *>(c)))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        close(fd);
      }
    }
}

Result<Message> recv_core(int sock, int timeout_ms, Guard guard) {
  if (timeout_ms >= 0) {
    struct pollfd p = {sock, POLLIN, 0};
    int rc;
    do {
      if (!still_ours(guard))
        return make_error(kChannelLost);
      rc = poll(&p, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0)
      return make_error(kChannelTimedOut);
    if (rc < 0)
      return make_error(std::string("poll: ") + std::strerror(errno));
  }
  // Peek at the size first: a SEQPACKET message is read whole or truncated.
  MsgHeader h{};
  ssize_t n;
  do {
    if (!still_ours(guard))
      return make_error(kChannelLost);
    n = recv(sock, &h, sizeof h, MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n == 0)
    return make_error(kChannelClosed);
  if (n < static_cast<ssize_t>(sizeof h))
    return make_error(n < 0
                          ? std::string("recv: ") + std::strerror(errno)
                          : std::string("short message on the agent channel"));
  if (h.size > kMaxMessage)
    return make_error("oversized message on the agent channel");
  std::vector<uint8_t> buf(sizeof h + h.size);
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  do {
    if (!still_ours(guard))
      return make_error(kChannelLost);
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  // The number may have changed hands during the call: then what was read
  // is the program's, not ours to act on.
  if (n >= 0 && !still_ours(guard)) {
    close_received(msg);
    return make_error(kChannelLost);
  }
  if (n != static_cast<ssize_t>(buf.size())) {
    if (n >= 0)
      close_received(msg);
    return make_error("truncated message on the agent channel");
  }
  Message m;
  m.type = static_cast<MsgType>(h.type);
  m.payload.assign(buf.begin() + sizeof h, buf.end());
  // The CLI's side (no guard) takes no descriptor: the agent sends none,
  // and a traced process forging messages must not fill the CLI's table.
  if (!guard) {
    close_received(msg);
    return m;
  }
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)) && m.fd < 0)
      std::memcpy(&m.fd, CMSG_DATA(c), sizeof(int));
  return m;
}

} // namespace

Result<void> send_message(int sock, const Message &m) {
  return send_core(sock, m, nullptr);
}

Result<Message> recv_message(int sock, int timeout_ms) {
  return recv_core(sock, timeout_ms, nullptr);
}

Result<void> send_message(OwnedFd &sock, const Message &m) {
  return send_core(sock.get(), m, &sock);
}

Result<Message> recv_message(OwnedFd &sock, int timeout_ms) {
  return recv_core(sock.get(), timeout_ms, &sock);
}

Result<Message> request_reply(int sock, const Message &m, int timeout_ms,
                              const NoticeSink &on_notice) {
  auto sent = send_message(sock, m);
  if (!sent)
    return std::move(sent).take_error();
  // The timeout is for the whole exchange: notices arriving without end (a
  // traced process can write anything on its side) do not stretch it.
  const Deadline deadline(timeout_ms);
  for (;;) {
    auto r = recv_message(sock, deadline.remaining_ms());
    if (!r)
      return std::move(r).take_error();
    if (r->type == MsgType::Reply) {
      if (r->payload.size() < sizeof(ReplyMsg))
        return make_error("malformed reply from the agent");
      return std::move(*r);
    }
    if (on_notice)
      on_notice(std::move(*r));
  }
}

Result<ReplyMsg> request(int sock, const Message &m, std::string *error_text,
                         int timeout_ms, std::vector<Message> *notices) {
  auto r = request_reply(sock, m, timeout_ms, [notices](Message &&n) {
    if (notices && notices->size() < kMaxQueuedNotices)
      notices->push_back(std::move(n));
  });
  if (!r)
    return std::move(r).take_error();
  ReplyMsg reply{};
  r->read(reply);
  if (reply.status != 0 && error_text)
    error_text->assign(r->payload.begin() + sizeof reply, r->payload.end());
  return reply;
}

namespace {

constexpr const char kAttachTag[] = "ubtrace-attach/1 ";

// A decimal u32 ending at a space; advances `p` past the space.
bool parse_u32(const char *&p, uint32_t *out) {
  uint64_t v = 0;
  const char *start = p;
  for (; *p >= '0' && *p <= '9'; ++p) {
    v = v * 10 + uint64_t(*p - '0');
    if (v > UINT32_MAX)
      return false;
  }
  if (p == start || *p != ' ')
    return false;
  ++p;
  *out = static_cast<uint32_t>(v);
  return true;
}

} // namespace

std::string encode_attach_argument(const AttachArgument &a) {
  return kAttachTag + std::to_string(a.cli_pid) + " " +
         std::to_string(a.cli_uid) + " " + a.address;
}

bool parse_attach_argument(const char *text, AttachArgument *out) {
  if (!text || std::strncmp(text, kAttachTag, sizeof kAttachTag - 1) != 0)
    return false;
  const char *p = text + sizeof kAttachTag - 1;
  AttachArgument a;
  if (!parse_u32(p, &a.cli_pid) || !parse_u32(p, &a.cli_uid))
    return false;
  a.address = p;
  if (a.address.size() < 2)
    return false;
  *out = std::move(a);
  return true;
}

} // namespace ubtrace::agent
