#include "runtime/maps/fd_passing.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::runtime::maps {
namespace {

Error socket_error(const char *what) {
  return make_error(std::string("fd passing: ") + what + ": " +
                    std::strerror(errno));
}

} // namespace

Result<void> send_fd(int socket, int fd) {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  ssize_t sent;
  do
    sent = sendmsg(socket, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent != 1)
    return socket_error("sendmsg");
  return {};
}

Result<int> receive_fd(int socket) {
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t received;
  do
    received = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  while (received < 0 && errno == EINTR);
  if (received < 0)
    return socket_error("recvmsg");
  if (received == 0)
    return make_error("fd passing: the peer closed the socket");
  for (cmsghdr *cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr;
       cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
        cmsg->cmsg_len == CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
      return fd;
    }
  }
  return make_error("fd passing: the message carried no descriptor");
}

} // namespace ubtrace::runtime::maps
