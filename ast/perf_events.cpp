#include "ast/perf_events.h"

namespace ubtrace::ast {
namespace {

// config values from linux/perf_event.h (enum perf_sw_ids, perf_hw_id).
constexpr PerfEventInfo kSoftware[] = {
    {"alignment-faults", "", kPerfTypeSoftware, 7, 1, false, false},
    {"bpf-output", "", kPerfTypeSoftware, 10, 1, false, false},
    {"context-switches", "cs", kPerfTypeSoftware, 3, 1000, false, true},
    {"cpu-clock", "cpu", kPerfTypeSoftware, 0, 1000000, true, false},
    {"cpu-migrations", "", kPerfTypeSoftware, 4, 1, false, true},
    {"dummy", "", kPerfTypeSoftware, 9, 1, false, false},
    {"emulation-faults", "", kPerfTypeSoftware, 8, 1, false, false},
    {"major-faults", "", kPerfTypeSoftware, 6, 1, false, false},
    {"minor-faults", "", kPerfTypeSoftware, 5, 100, false, false},
    {"page-faults", "faults", kPerfTypeSoftware, 2, 100, false, false},
    {"task-clock", "", kPerfTypeSoftware, 1, 1000000, true, false},
};

constexpr PerfEventInfo kHardware[] = {
    {"backend-stalls", "", kPerfTypeHardware, 8, 1000000, false, false},
    {"branch-instructions", "branches", kPerfTypeHardware, 4, 100000, false,
     false},
    {"branch-misses", "", kPerfTypeHardware, 5, 100000, false, false},
    {"bus-cycles", "", kPerfTypeHardware, 6, 100000, false, false},
    {"cache-misses", "", kPerfTypeHardware, 3, 1000000, false, false},
    {"cache-references", "", kPerfTypeHardware, 2, 1000000, false, false},
    {"cpu-cycles", "cycles", kPerfTypeHardware, 0, 1000000, false, false},
    {"frontend-stalls", "", kPerfTypeHardware, 7, 1000000, false, false},
    {"instructions", "", kPerfTypeHardware, 1, 1000000, false, false},
    {"ref-cycles", "", kPerfTypeHardware, 9, 1000000, false, false},
};

} // namespace

std::span<const PerfEventInfo> software_events() {
  return kSoftware;
}

std::span<const PerfEventInfo> hardware_events() {
  return kHardware;
}

const PerfEventInfo *find_perf_event(bool hardware, std::string_view name) {
  for (const PerfEventInfo &e :
       hardware ? hardware_events() : software_events())
    if (name == e.name || (!e.alias.empty() && name == e.alias))
      return &e;
  return nullptr;
}

} // namespace ubtrace::ast
