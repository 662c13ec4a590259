// --metrics ADDR:PORT: the maps as Prometheus metrics over HTTP while the
// trace runs (GET /metrics, the exposition of output/prometheus.h), for
// Prometheus to scrape. A request whose Accept header prefers
// application/openmetrics-text (as Prometheus's own scrapes do) gets
// OpenMetrics 1.0; any other gets the text format 0.0.4.
//
// The session services it from its loop (no thread of its own): each
// round answers the connections waiting, reading the maps then from the
// shared region, so a scrape never waits on, or makes wait, the traced
// process. A slow or silent client is cut off after a second; requests
// are read up to 8 KiB.
#pragma once

#include "backends/output/prometheus.h"
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

  using Body = std::function<std::string(output::Exposition)>;
  // Answers every connection waiting now; `body` gives the exposition.
  void service(const Body &body);
  // The address it listens on, as "host:port".
  const std::string &where() const { return where_; }
  uint64_t scrapes() const { return scrapes_; }

private:
  MetricsServer(int fd, std::string where)
      : fd_(fd), where_(std::move(where)) {}
  void answer(int conn, const Body &body);

  int fd_;
  std::string where_;
  uint64_t scrapes_ = 0;
};

// The dialect an Accept header asks for: OpenMetrics when it weighs
// application/openmetrics-text (version 1.0.0 or none named) above the
// text format (text/plain, text/*, */*), else the text format.
output::Exposition negotiate_exposition(const std::string &accept);

} // namespace ubtrace::backends
