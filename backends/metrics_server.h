// --metrics ADDR:PORT: the maps as Prometheus metrics over HTTP while the
// trace runs (GET /metrics, the text exposition of output/prometheus.h),
// for Prometheus to scrape.
//
// The session services it from its loop (no thread of its own): each
// round answers the connections waiting, reading the maps then from the
// shared region, so a scrape never waits on, or makes wait, the traced
// process. A slow or silent client is cut off after a second; requests
// are read up to 8 KiB.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ubtrace::backends {

class MetricsServer {
public:
  // Listens on "HOST:PORT" (":PORT" for every address; HOST a numeric
  // IPv4 or IPv6 address or a name).
  static Result<std::unique_ptr<MetricsServer>>
  listen(const std::string &address);
  ~MetricsServer();

  // Answers every connection waiting now; `body` gives the exposition.
  void service(const std::function<std::string()> &body);
  // The address it listens on, as "host:port".
  const std::string &where() const { return where_; }
  uint64_t scrapes() const { return scrapes_; }

private:
  MetricsServer(int fd, std::string where)
      : fd_(fd), where_(std::move(where)) {}
  void answer(int conn, const std::function<std::string()> &body);

  int fd_;
  std::string where_;
  uint64_t scrapes_ = 0;
};

} // namespace ubtrace::backends
