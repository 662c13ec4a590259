// Per-call cost of ubtrace's inline hooks: an unhooked call, an entry hook
// with an empty handler (vector state saved, and not), a return hook, both,
// and the int3 path. Each iteration is one call through a volatile function
// pointer; subtract the unhooked time for the hook's own cost.
//
//   ninja -C build hook_bench && build/tests/unit/hook/hook_bench
#include "runtime/hook/hook.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>

extern "C" long hb_target(long);
extern "C" long hb_ret_target(long);
extern "C" long hb_tiny(long);

namespace {

using namespace ubtrace::runtime::hook;
using ubtrace::Result;

void empty_handler(PtRegs *, void *) {}

uint64_t addr(long (*fn)(long)) {
  return reinterpret_cast<uint64_t>(fn);
}

HookOptions options(long (*fn)(long), uint64_t size, VectorState v) {
  HookOptions o;
  o.function = {addr(fn), size};
  o.vectors = v;
  return o;
}

HookId must(Result<HookId> r) {
  if (!r.ok()) {
    fprintf(stderr, "hook_bench: %s\n", r.error().c_str());
    abort();
  }
  return *r;
}

void run_calls(benchmark::State &state, long (*fn)(long)) {
  long (*volatile f)(long) = fn;
  long x = 0;
  for (auto _ : state) {
    x = f(x);
    benchmark::DoNotOptimize(x);
  }
}

// Installs the given hooks for the benchmark's duration: on hb_target
// when there is an entry hook, else on hb_ret_target (its own site).
void bench_hooks(benchmark::State &state, bool entry, bool ret, VectorState v) {
  long (*target)(long) = entry ? hb_target : hb_ret_target;
  HookOptions o = options(target, 11, v);
  HookId ids[2];
  int n = 0;
  if (entry)
    ids[n++] =
        must(install_entry_hook(addr(target), empty_handler, nullptr, o));
  if (ret)
    ids[n++] =
        must(install_return_hook(addr(target), empty_handler, nullptr, o));
  run_calls(state, target);
  for (int i = 0; i < n; ++i)
    uninstall_hook(ids[i]).ok();
}

void BM_Unhooked(benchmark::State &state) {
  run_calls(state, hb_target);
}

void BM_EntryHook_NotTouched(benchmark::State &state) {
  bench_hooks(state, true, false, VectorState::NotTouched);
}
void BM_EntryHook_Preserve(benchmark::State &state) {
  bench_hooks(state, true, false, VectorState::Preserve);
}
void BM_ReturnHook_NotTouched(benchmark::State &state) {
  bench_hooks(state, false, true, VectorState::NotTouched);
}
void BM_ReturnHook_Preserve(benchmark::State &state) {
  bench_hooks(state, false, true, VectorState::Preserve);
}
void BM_EntryAndReturn_NotTouched(benchmark::State &state) {
  bench_hooks(state, true, true, VectorState::NotTouched);
}

void BM_Int3Path(benchmark::State &state) {
  HookId id =
      must(install_entry_hook(addr(hb_tiny), empty_handler, nullptr,
                              options(hb_tiny, 3, VectorState::NotTouched)));
  run_calls(state, hb_tiny);
  uninstall_hook(id).ok();
}

// Installing and removing an entry hook (the jump, its trampoline reused):
// reading /proc/self/maps, four membarriers each way, waiting for running
// handlers.
void BM_AttachDetach(benchmark::State &state) {
  HookOptions o = options(hb_target, 11, VectorState::NotTouched);
  for (auto _ : state) {
    HookId id =
        must(install_entry_hook(addr(hb_target), empty_handler, nullptr, o));
    uninstall_hook(id).ok();
  }
}

BENCHMARK(BM_Unhooked);
BENCHMARK(BM_EntryHook_NotTouched);
BENCHMARK(BM_EntryHook_Preserve);
BENCHMARK(BM_ReturnHook_NotTouched);
BENCHMARK(BM_ReturnHook_Preserve);
BENCHMARK(BM_EntryAndReturn_NotTouched);
BENCHMARK(BM_Int3Path);
BENCHMARK(BM_AttachDetach);

} // namespace

BENCHMARK_MAIN();
