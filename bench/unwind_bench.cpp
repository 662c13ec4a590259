// The get_stack helper (ustack) over a 16-frame stack, as a probe runs it:
// the real helper with a probe context whose registers were taken in the
// leaf of a 16-deep chain, fault-safe reads and all. Side by side:
//   FramePointers  the rbp chain (no rows published), a chain with them;
//   Cfi            the loaded modules' CFI rows, the same chain;
//   CfiNoFp        CFI rows, a chain built without frame pointers (the
//                  rbp chain finds 1-2 frames there).
//
//   build/bench/unwind_bench --benchmark_repetitions=5
#include "runtime/abi.h"
#include "runtime/helpers/host_helpers.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/unwind/loaded_modules.h"

#include <benchmark/benchmark.h>
#include <linux/bpf.h>

extern "C" {
typedef void (*chain_cb)(uint64_t rip, uint64_t rsp, uint64_t rbp);
void fp_chain(chain_cb cb, int depth);
void nofp_chain(chain_cb cb, int depth);
}

namespace {

using namespace ubtrace::runtime;
namespace abi = ubtrace::abi;

maps::UniformHelper get_stack_helper() {
  for (const auto &e : helpers::host_helpers())
    if (e.id == BPF_FUNC_get_stack)
      return e.fn;
  return nullptr;
}

benchmark::State *g_state = nullptr;
uint64_t g_frames = 0;

void run(uint64_t rip, uint64_t rsp, uint64_t rbp) {
  static const maps::UniformHelper helper = get_stack_helper();
  abi::HostProbeCtx ctx{};
  ctx.regs.rip = rip;
  ctx.regs.rsp = rsp;
  ctx.regs.rbp = rbp;
  uint64_t frames[16];
  uint64_t bytes = 0;
  for (auto _ : *g_state) {
    bytes = helper(reinterpret_cast<uint64_t>(&ctx),
                   reinterpret_cast<uint64_t>(frames), sizeof frames,
                   BPF_F_USER_STACK, 0);
    benchmark::DoNotOptimize(frames);
  }
  g_frames = bytes / 8;
}

void walk(benchmark::State &state, void (*chain)(chain_cb, int), bool rows) {
  // Reads are fault-safe as in the agent: its SIGSEGV/SIGBUS handlers,
  // not a system call per read.
  // As under -c, where the preload interposes sigaction(): one signal-mask
  // query per helper call (-p adds two sigaction queries).
  static bool armed =
      (helpers::set_signals_interposed(), helpers::arm_safe_copy());
  if (!armed) {
    state.SkipWithError("cannot arm the fault-safe copies");
    return;
  }
  static bool refreshed = false;
  if (rows && !refreshed) {
    unwind::enable_loaded_modules();
    unwind::refresh_loaded_modules();
    refreshed = true;
  }
  if (!rows && refreshed) {
    state.SkipWithError("rows are published: run FramePointers first");
    return;
  }
  g_state = &state;
  chain(run, 20);
  state.counters["frames"] = static_cast<double>(g_frames);
}

// What the walk costs without the fault-safe reads, and what one
// SafeReader (a signal-mask query) costs alone.
void run_plain(uint64_t rip, uint64_t rsp, uint64_t rbp) {
  unwind::ModuleSet mods = unwind::loaded_modules();
  uint64_t frames[16];
  size_t n = 0;
  for (auto _ : *g_state) {
    n = unwind::walk_stack(
        mods.modules, mods.count, {rip, rsp, rbp}, frames, 16,
        [](void *dst, uint64_t addr, size_t size) {
          __builtin_memcpy(dst, reinterpret_cast<const void *>(addr), size);
          return true;
        });
    benchmark::DoNotOptimize(frames);
  }
  g_frames = n;
}
void CfiPlainReads(benchmark::State &s) {
  g_state = &s;
  nofp_chain(run_plain, 20);
  s.counters["frames"] = static_cast<double>(g_frames);
}
void SafeReaderAlone(benchmark::State &s) {
  static bool armed =
      (helpers::set_signals_interposed(), helpers::arm_safe_copy());
  benchmark::DoNotOptimize(armed);
  for (auto _ : s) {
    helpers::SafeReader r;
    benchmark::DoNotOptimize(&r);
  }
}

void FramePointers(benchmark::State &s) {
  walk(s, fp_chain, false);
}
void Cfi(benchmark::State &s) {
  walk(s, fp_chain, true);
}
void CfiNoFp(benchmark::State &s) {
  walk(s, nofp_chain, true);
}

} // namespace

// Registered in this order: the rows are published for the rest of the
// process once the first CFI case runs.
BENCHMARK(FramePointers);
BENCHMARK(Cfi);
BENCHMARK(CfiNoFp);
BENCHMARK(CfiPlainReads);
BENCHMARK(SafeReaderAlone);
BENCHMARK_MAIN();
