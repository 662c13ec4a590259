// Stack-keyed maps as a pprof profile (profile.proto, gzipped), the format
// `go tool pprof`, Pyroscope, Parca and Grafana read.
//
// A map goes into the profile when its key holds a stack (ustack, kstack,
// alone or in a tuple) and its values are plain integers (count(), sum(),
// min(), max(), integer assignments); every such map is one sample type
// (type: the map's name without '@', "map" for @; unit: "count" for
// count(), none otherwise), and each entry a sample with that value and
// zero for the other types; entries of several maps with the same stack
// and labels share a sample. The default sample type is the first map.
// Locations are the stack's addresses, leaf first, with the mapping that
// holds each (file, address range, offset, build id) and its lines:
// function names as text output prints them, source file and line where
// debug info gives them, and inlined calls as further lines of the same
// location, innermost first. The key's other parts become labels named as
// the Prometheus exporter names them (printed_map.h key_part_names):
// numbers as numeric labels, everything else as text.
//
// `-f pprof -o FILE` rewrites FILE at each print, atomically; the CLI
// refuses -f pprof without -o (standard output carries the traced
// program's output). Maps that do not fit print as text to standard
// output.
#pragma once

#include "backends/output/context.h"
#include "backends/output/snapshot_output.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::output {

// Whether `map` can be a pprof sample type.
bool is_profile_map(const PrintedMap &map);

struct ProfileTimes {
  int64_t time_nanos = 0;     // when the trace started (Unix epoch)
  int64_t duration_nanos = 0; // how long it had run when written
};

// The serialised profile.proto of `maps` (those is_profile_map takes),
// not compressed.
std::string pprof_profile(const std::vector<const PrintedMap *> &maps,
                          Symbolizer *symbolizer, const ProfileTimes &times);

// `data` in gzip format (what pprof files are).
std::string gzip(const std::string &data);

class PprofOutput : public SnapshotOutput {
public:
  // `ctx` supplies the symbolizer (it may be set after construction).
  PprofOutput(std::string file, std::ostream &out, std::ostream &err,
              const FormatContext &ctx);

protected:
  bool takes(const PrintedMap &map) const override {
    return is_profile_map(map);
  }
  std::string render(const std::vector<const PrintedMap *> &maps) override;

private:
  const FormatContext &ctx_;
  std::chrono::system_clock::time_point start_; // the trace's start
  std::chrono::steady_clock::time_point start_mono_;
};

} // namespace ubtrace::output
