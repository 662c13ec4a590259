#include "tests/faults/channel/sockets.h"

#include <cstddef>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace ubtrace::faults {

sockaddr_un abstract_address(const std::string &name, socklen_t *len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  *len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

int squat(const std::string &name) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  socklen_t len;
  sockaddr_un addr = abstract_address(name, &len);
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
      listen(fd, 8) == 0)
    return fd;
  if (fd >= 0)
    close(fd);
  return -1;
}

int squatter_caller(int squatter) {
  return accept4(squatter, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

ssize_t bytes_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0)
    return -1;
  char buf[256];
  return recv(fd, buf, sizeof buf, MSG_DONTWAIT);
}

} // namespace ubtrace::faults
