#include "backends/metrics_server.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::backends {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` or `deadline` passes.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - Clock::now())
                    .count();
    if (left <= 0)
      return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r > 0)
      return true;
    if (r < 0 && errno != EINTR)
      return false;
  }
}

std::string response(const char *status, const char *type,
                     const std::string &body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

} // namespace

Result<std::unique_ptr<MetricsServer>>
MetricsServer::listen(const std::string &address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return make_error("--metrics wants HOST:PORT or :PORT, not '" + address +
                      "'");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo *found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(),
                             port.c_str(), &hints, &found);
      rc != 0)
    return make_error("--metrics " + address + ": " + gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo *a = found; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family,
                      a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      ::freeaddrinfo(found);
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len);
      char name[INET6_ADDRSTRLEN] = "?";
      uint16_t p = 0;
      if (bound.ss_family == AF_INET) {
        auto *in = reinterpret_cast<sockaddr_in *>(&bound);
        ::inet_ntop(AF_INET, &in->sin_addr, name, sizeof name);
        p = ntohs(in->sin_port);
      } else if (bound.ss_family == AF_INET6) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&bound);
        ::inet_ntop(AF_INET6, &in6->sin6_addr, name, sizeof name);
        p = ntohs(in6->sin6_port);
      }
      std::string where = bound.ss_family == AF_INET6
                              ? "[" + std::string(name) + "]"
                              : std::string(name);
      return std::unique_ptr<MetricsServer>(
          new MetricsServer(fd, where + ":" + std::to_string(p)));
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return make_error("--metrics " + address + ": cannot listen: " + why);
}

MetricsServer::~MetricsServer() {
  ::close(fd_);
}

void MetricsServer::service(const std::function<std::string()> &body) {
  for (;;) {
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (conn < 0)
      return; // EAGAIN: nobody else waiting (or a transient error)
    answer(conn, body);
    ::close(conn);
  }
}

void MetricsServer::answer(int conn, const std::function<std::string()> &body) {
  auto deadline = Clock::now() + std::chrono::seconds(1);
  std::string request;
  char buf[2048];
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.size() < 8192) {
    if (!wait_for(conn, POLLIN, deadline))
      return;
    ssize_t n = ::read(conn, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      return;
    }
    request.append(buf, static_cast<size_t>(n));
  }
  std::string line = request.substr(0, request.find("\r\n"));
  std::string reply;
  if (line.starts_with("GET /metrics ") || line.starts_with("GET /metrics?")) {
    scrapes_++;
    reply =
        response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body());
  } else if (line.starts_with("GET / ")) {
    reply = response("200 OK", "text/html; charset=utf-8",
                     "<html><body><a href=\"/metrics\">/metrics</a>"
                     "</body></html>\n");
  } else if (line.starts_with("GET ")) {
    reply = response("404 Not Found", "text/plain", "not found\n");
  } else {
    reply = response("405 Method Not Allowed", "text/plain", "GET only\n");
  }
  size_t sent = 0;
  while (sent < reply.size()) {
    if (!wait_for(conn, POLLOUT, deadline))
      return;
    ssize_t n =
        ::send(conn, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return;
    }
    sent += static_cast<size_t>(n);
  }
}

} // namespace ubtrace::backends
