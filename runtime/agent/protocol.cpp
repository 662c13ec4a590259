#include "runtime/agent/protocol.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

namespace ubtrace::agent {

// Messages are small (programs are the largest, a few tens of KB).
static constexpr size_t kMaxMessage = 16u << 20;

Result<void> send_message(int sock, const Message &m) {
  MsgHeader h{static_cast<uint32_t>(m.type), static_cast<uint32_t>(m.payload.size())};
  std::vector<uint8_t> buf(sizeof h + m.payload.size());
  std::memcpy(buf.data(), &h, sizeof h);
  if (!m.payload.empty())
    std::memcpy(buf.data() + sizeof h, m.payload.data(), m.payload.size());
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr msg {};
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
      int want = static_cast<int>(std::min<size_t>(buf.size() + (64u << 10), INT32_MAX));
      (void)setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
      continue;
    }
    if (n < 0 && errno == EMSGSIZE) {
      int have = 0;
      socklen_t len = sizeof have;
      (void)getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &have, &len);
      return make_error("cannot send a message of " + std::to_string(buf.size()) +
                        " bytes to the agent: the channel carries at most about " +
                        std::to_string(have / 2) +
                        " (raise sysctl net.core.wmem_max, or make the probe smaller)");
    }
    return make_error(std::string("cannot send to the agent channel: ") +
                      (n < 0 ? std::strerror(errno) : "short write"));
  }
}

Result<Message> recv_message(int sock, int timeout_ms) {
  if (timeout_ms >= 0) {
    struct pollfd p = {sock, POLLIN, 0};
    int rc;
    do
      rc = poll(&p, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
      return make_error("timed out waiting on the agent channel");
    if (rc < 0)
      return make_error(std::string("poll: ") + std::strerror(errno));
  }
  // Peek at the size first: a SEQPACKET message is read whole or truncated.
  MsgHeader h{};
  ssize_t n;
  do
    n = recv(sock, &h, sizeof h, MSG_PEEK);
  while (n < 0 && errno == EINTR);
  if (n == 0)
    return make_error("channel closed");
  if (n < static_cast<ssize_t>(sizeof h))
    return make_error(n < 0 ? std::string("recv: ") + std::strerror(errno)
                            : std::string("short message on the agent channel"));
  if (h.size > kMaxMessage)
    return make_error("oversized message on the agent channel");
  std::vector<uint8_t> buf(sizeof h + h.size);
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  do
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(buf.size()))
    return make_error("truncated message on the agent channel");
  Message m;
  m.type = static_cast<MsgType>(h.type);
  m.payload.assign(buf.begin() + sizeof h, buf.end());
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(&m.fd, CMSG_DATA(c), sizeof(int));
  return m;
}

Result<ReplyMsg> request(int sock, const Message &m, std::string *error_text,
                         int timeout_ms, std::vector<Message> *notices) {
  auto sent = send_message(sock, m);
  if (!sent)
    return std::move(sent).take_error();
  for (;;) {
    auto r = recv_message(sock, timeout_ms);
    if (!r)
      return std::move(r).take_error();
    if (r->type != MsgType::Reply) {
      if (notices)
        notices->push_back(std::move(*r));
      continue;
    }
    ReplyMsg reply{};
    if (!r->read(reply))
      return make_error("malformed reply from the agent");
    if (reply.status != 0 && error_text)
      error_text->assign(r->payload.begin() + sizeof reply, r->payload.end());
    return reply;
  }
}

} // namespace ubtrace::agent
