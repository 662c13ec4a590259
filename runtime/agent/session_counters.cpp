// Built with -fno-builtin: the byte loops below must stay loops, never
// become calls to memcpy (which the trace may probe).
#include "runtime/agent/session_counters.h"

#include "runtime/agent/agent_counters.h"
#include "runtime/agent/perf_events.h"
#include "runtime/agent/profile.h"
#include "runtime/agent/protocol.h"
#include "runtime/agent/raw_notice.h"
#include "runtime/agent/raw_syscall.h"
#include "runtime/agent/syscalls.h"
#include "runtime/helpers/pid_view.h"
#include "runtime/hook/thread_pool.h"
#include "runtime/vm/interpreter.h"

#include <cstdlib>

namespace ubtrace::agent {

std::atomic<uint64_t> g_run_errors[3] = {};

namespace {

namespace c = counter;

// The order of kNames is the order of values().
constexpr const char *kNames[] = {
    c::kNestedSkips,       c::kShadowOverflows,  c::kRefusedClaims,
    c::kVectorSkips,       c::kUnwoundEntries,   c::kAbandonedRuns,
    c::kNoticeTimeouts,    c::kInsnBudget,       c::kMissingHelper,
    c::kProfileOverruns,   c::kProfileUntimed,   c::kProfileLate,
    c::kProfileBlocked,    c::kSyscallUntraced,  c::kSyscallClonesRefused,
    c::kSyscallChildExits, c::kSyscallSandboxed, c::kPerfClosed,
    c::kPerfNested,        c::kPerfUnarmed,      c::kPidViewMisses};
constexpr size_t kCount = sizeof kNames / sizeof kNames[0];

// Every counter's encoding (a length, the name, the value) fits: the
// encoder stops at kEncodedCountersMax, and counters past it (once the
// three perf ones, when the limit was 512) were never reported.
constexpr size_t encoded_size() {
  size_t total = 0;
  for (const char *name : kNames) {
    size_t len = 0;
    while (name[len])
      len++;
    total += 4 + len + 8;
  }
  return total;
}
static_assert(encoded_size() <= kEncodedCountersMax,
              "raise kEncodedCountersMax: the counters do not fit");
static_assert(kEncodedCountersMax <= kRawNoticeMax,
              "the counters travel in one raw notice");

struct Values {
  uint64_t v[kCount];
};

Values values() {
  runtime::hook::ThreadCounters t = runtime::hook::thread_counters();
  profile::Counters p = profile::counters();
  syscalls::Counters s = syscalls::counters();
  return {{t.nested_skips,
           t.shadow_overflows,
           t.refused_claims,
           t.vector_skips,
           t.unwound_entries,
           t.abandoned + t.abandoned_waits,
           notice_wait_timeouts(),
           g_run_errors[size_t(vm::RunStatus::InsnBudgetExceeded)].load(
               std::memory_order_relaxed),
           g_run_errors[size_t(vm::RunStatus::MissingHelper)].load(
               std::memory_order_relaxed),
           p.overruns,
           p.untimed,
           p.late,
           p.blocked,
           s.untraced_threads,
           s.clones_refused,
           s.child_exits_unseen,
           uint64_t(s.sandboxed),
           perf::counters().closed,
           perf::counters().nested,
           perf::counters().unarmed,
           runtime::helpers::pid_view_misses()}};
}

Values g_baseline; // written before arm_exit_report arms the channel

void put(uint8_t *&at, const void *p, size_t n) {
  copy_without_libc(at, p, n);
  at += n;
}

std::atomic<bool> g_exit_report{false};

void on_process_exit() {
  if (!g_exit_report.load(std::memory_order_seq_cst))
    return;
  uint8_t payload[kEncodedCountersMax];
  size_t size = encode_session_counters(payload);
  (void)send_raw_notice(MsgType::Counters, payload, size);
}

} // namespace

void start_session_counters() {
  g_baseline = values();
}

size_t encode_session_counters(uint8_t *out) {
  Values now = values();
  uint8_t *at = out;
  for (size_t i = 0; i < kCount; i++) {
    uint32_t len = 0;
    while (kNames[i][len])
      len++;
    uint64_t v = now.v[i] >= g_baseline.v[i] ? now.v[i] - g_baseline.v[i] : 0;
    if (static_cast<size_t>(at - out) + 4 + len + 8 > kEncodedCountersMax)
      break;
    put(at, &len, 4);
    put(at, kNames[i], len);
    put(at, &v, 8);
  }
  return static_cast<size_t>(at - out);
}

void arm_exit_report() {
  static bool registered = false;
  if (!registered)
    registered = atexit(on_process_exit) == 0;
  g_exit_report.store(true, std::memory_order_seq_cst);
}

void disarm_exit_report() {
  g_exit_report.store(false, std::memory_order_seq_cst);
}

} // namespace ubtrace::agent
