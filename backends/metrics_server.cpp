#include "backends/metrics_server.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <string_view>
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

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos)
    return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// The value of header `name` (lower case) in a request, "" when absent.
std::string header(const std::string &request, const std::string &name) {
  size_t pos = request.find("\r\n");
  while (pos != std::string::npos) {
    size_t start = pos + 2;
    size_t end = request.find("\r\n", start);
    if (end == std::string::npos || end == start)
      break;
    std::string_view line(request.data() + start, end - start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos &&
        lower(std::string(line.substr(0, colon))) == name)
      return trim(line.substr(colon + 1));
    pos = end;
  }
  return "";
}

} // namespace

output::Exposition negotiate_exposition(const std::string &accept) {
  double open_metrics = 0, text = 0;
  size_t pos = 0;
  while (pos <= accept.size()) {
    size_t comma = accept.find(',', pos);
    if (comma == std::string::npos)
      comma = accept.size();
    std::string range = lower(accept.substr(pos, comma - pos));
    pos = comma + 1;
    // type;param=value;...: q weighs it, version picks a dialect's version.
    double q = 1;
    std::string version;
    size_t semi = range.find(';');
    std::string type = trim(range.substr(0, semi));
    while (semi != std::string::npos) {
      size_t next = range.find(';', semi + 1);
      std::string param = trim(range.substr(semi + 1, next == std::string::npos
                                                          ? std::string::npos
                                                          : next - semi - 1));
      semi = next;
      size_t eq = param.find('=');
      if (eq == std::string::npos)
        continue;
      std::string key = trim(param.substr(0, eq));
      std::string value = trim(param.substr(eq + 1));
      if (key == "q")
        q = std::strtod(value.c_str(), nullptr);
      else if (key == "version")
        version = value;
    }
    if (type == "application/openmetrics-text" &&
        (version.empty() || version == "1.0.0"))
      open_metrics = std::max(open_metrics, q);
    else if (type == "text/plain" || type == "text/*" || type == "*/*")
      text = std::max(text, q);
  }
  return open_metrics > 0 && open_metrics > text
             ? output::Exposition::OpenMetrics
             : output::Exposition::Text;
}

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

void MetricsServer::service(const Body &body) {
  for (;;) {
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (conn < 0)
      return; // EAGAIN: nobody else waiting (or a transient error)
    answer(conn, body);
    ::close(conn);
  }
}

void MetricsServer::answer(int conn, const Body &body) {
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
    auto dialect = negotiate_exposition(header(request, "accept"));
    reply = response("200 OK",
                     dialect == output::Exposition::OpenMetrics
                         ? "application/openmetrics-text; version=1.0.0; "
                           "charset=utf-8"
                         : "text/plain; version=0.0.4; charset=utf-8",
                     body(dialect));
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
