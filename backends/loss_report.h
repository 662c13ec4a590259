// What every loss counter of a trace means, in the sentence printed at exit
// after "Lost N events" (text: stderr; -f json: a "lost_hits" record with
// the reason's key). Counters come as named values: the agent's
// (runtime/agent/agent_counters.h) and the CLI's own reading of the maps
// region (kRegion* below). Zero counters print nothing; a name this table
// does not know (an agent newer than the table) still prints, with its
// name. The texts are documented in man/ubtrace.8 (LOSSES).
#pragma once

#include "backends/output/output.h"
#include "runtime/agent/named_values.h"
#include "runtime/hook/thread_state.h"

#include <vector>

namespace ubtrace::backends {

// Counters of the maps region, read by the CLI.
inline constexpr const char *kRegionSlotExhausted = "region_slot_exhausted";
inline constexpr const char *kRegionSlotRawChildren =
    "region_slot_raw_children";
inline constexpr const char *kRingDeadWriters = "ring_dead_writers";
inline constexpr const char *kRingStalledWriters = "ring_stalled_writers";
// --follow's, counted by the user-space backend.
inline constexpr const char *kFollowFailed = "follow_failed";
inline constexpr const char *kFollowExecLost = "follow_exec_lost";
inline constexpr const char *kFollowAgentClosed = "follow_agent_closed";
// System-wide: processes mapping a probed file that could not be traced.
inline constexpr const char *kSystemWideSkipped = "system_wide_skipped";
// System-wide: processes whose mappings could not be read (not the user's).
inline constexpr const char *kSystemWideUnreadable = "system_wide_unreadable";
// System-wide sampling (userspace/system_sampler.h): samples the kernel
// could not write, and samples whose probe stopped with an error.
inline constexpr const char *kSampleLost = "system_samples_lost";
inline constexpr const char *kSampleFailed = "system_sample_failed";
inline constexpr const char *kSampleReadGone = "system_sample_read_gone";
// Probes on the -c command's calls before its agent ran (command_exec.h)
// that read memory not kept for them.
inline constexpr const char *kLoaderReadUnkept = "loader_read_unkept";
// Samples still in a ring, or read but not yet run, when the trace ended.
inline constexpr const char *kSampleUnrun = "system_samples_unrun";

// The limits the sentences name ({slots}, {states}, {depth} in them).
struct LossContext {
  uint32_t thread_slots = 0;                         // the region's
  uint32_t hook_states = runtime::hook::kMaxThreads; // the hook pool's
  uint32_t shadow_depth = runtime::hook::kShadowDepth;
};

std::vector<output::LostHits>
describe_losses(const agent::NamedValues &counters, const LossContext &context);

} // namespace ubtrace::backends
