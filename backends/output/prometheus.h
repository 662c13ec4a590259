// Maps as Prometheus metrics: the text exposition format (version 0.0.4),
// one metric family per map, that node_exporter's textfile collector and
// Prometheus itself read.
//
//   count(), sum()        counter   ubtrace_NAME_total
//   min(), max(), values  gauge     ubtrace_NAME
//   avg(), stats()        summary   ubtrace_NAME_sum, ubtrace_NAME_count;
//                         and gauge ubtrace_NAME_average
//   hist(), lhist()       histogram ubtrace_NAME_bucket{le="..."} (the
//                         largest value each power-of-two or linear bucket
//                         holds, then +Inf), ubtrace_NAME_count
//
// NAME is the map's name without '@' ("map" for @), characters Prometheus
// does not allow in a name made '_'. Keys become labels: `key` for a
// single key, key0..keyN for a tuple's parts, a record's field names for
// a record's (`@[(pid=pid, comm=comm)]`), or the names a
// `// ubtrace:metric` comment gives (ast/passes/metric_annotations.h),
// whose help text also replaces the HELP line's; a stack key's frames are
// joined outermost first with ';', as -f folded writes them. Label values
// are escaped (\\, \", \n). Entries whose value is not a number (strings)
// and tseries() maps are left out. A hist() exports no _sum: the map keeps
// only counts per bucket. A sum() is a counter while no entry is
// negative, and a gauge once one is.
//
// Two dialects: Prometheus's text format 0.0.4, and OpenMetrics 1.0
// (a counter family named without its samples' _total, quotes escaped in
// HELP, "# EOF" at the end), which the live endpoint serves to scrapers
// that ask for it (backends/metrics_server.h).
//
// `-f prometheus -o FILE` keeps FILE the exposition of every map as last
// printed (print(), interval probes, exit), rewritten atomically (a
// temporary file in the same directory, then rename) so a collector never
// reads half of it; without -o each print writes the printed maps'
// families to standard output. A script that clear()s a counter map after
// printing it starts it again from zero, which Prometheus's rate() and
// increase() read as a counter reset.
#pragma once

#include "backends/output/context.h"
#include "backends/output/output.h"
#include "backends/output/snapshot_output.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ubtrace::output {

enum class Exposition : uint8_t { Text, OpenMetrics };

// The exposition of `maps`, families in the order given.
// `ctx` (optional) names a stack key's frames from its addresses, as -f
// folded does (folded_output.h).
std::string prometheus_text(const std::vector<const PrintedMap *> &maps,
                            Exposition dialect = Exposition::Text,
                            const FormatContext *ctx = nullptr,
                            const std::string &prefix = "ubtrace_");

// A map's metric name stem: "@lat_us" -> "ubtrace_lat_us".
std::string prometheus_name(const std::string &map_name,
                            const std::string &prefix = "ubtrace_");

// A label value with \\, \" and \n escaped.
std::string prometheus_escape(const std::string &text);

class PrometheusOutput : public SnapshotOutput {
public:
  // `file` empty: each print's families go to `out`, and what is not a map
  // to `err`. Otherwise `file` holds every map's last printed state and
  // the rest goes to `out` as text output writes it.
  PrometheusOutput(std::string file, std::ostream &out, std::ostream &err,
                   const FormatContext *ctx = nullptr)
      : SnapshotOutput(std::move(file), out, err), ctx_(ctx) {}

  void map(const PrintedMap &map) override;
  void end() override;

protected:
  std::string render(const std::vector<const PrintedMap *> &maps) override {
    return prometheus_text(maps, Exposition::Text, ctx_);
  }

private:
  const FormatContext *ctx_;
};

} // namespace ubtrace::output
