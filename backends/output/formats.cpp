#include "backends/output/formats.h"

#include "backends/output/folded_output.h"
#include "backends/output/json_output.h"
#include "backends/output/pprof.h"
#include "backends/output/prometheus.h"
#include "backends/output/text_output.h"

namespace ubtrace::output {

const std::vector<OutputFormat> &output_formats() {
  static const std::vector<OutputFormat> formats = {
      {"text", "bpftrace's text output (the default)", false, false,
       [](const OutputSetup &s) -> std::unique_ptr<Output> {
         return std::make_unique<TextOutput>(s.out, s.err);
       }},
      {"json", "one JSON object per line, as bpftrace's -f json", false, false,
       [](const OutputSetup &s) -> std::unique_ptr<Output> {
         return std::make_unique<JsonOutput>(s.out);
       }},
      {"folded", "maps as folded stacks for flame graphs", false, false,
       [](const OutputSetup &s) -> std::unique_ptr<Output> {
         return std::make_unique<FoldedOutput>(s.out, s.err, &s.ctx);
       }},
      {"prometheus",
       "maps as Prometheus metrics; with -o FILE, the file is rewritten "
       "at each print for node_exporter's textfile collector",
       true, false,
       [](const OutputSetup &s) -> std::unique_ptr<Output> {
         return std::make_unique<PrometheusOutput>(s.whole_file, s.out, s.err,
                                                   &s.ctx);
       }},
      {"pprof",
       "stack-keyed maps as a gzipped pprof profile (go tool pprof); "
       "needs -o FILE, rewritten at each print",
       true, true,
       [](const OutputSetup &s) -> std::unique_ptr<Output> {
         return std::make_unique<PprofOutput>(s.whole_file, s.out, s.err,
                                              s.ctx);
       }},
  };
  return formats;
}

const OutputFormat *find_output_format(std::string_view name) {
  for (const auto &f : output_formats())
    if (f.name == name)
      return &f;
  return nullptr;
}

} // namespace ubtrace::output
