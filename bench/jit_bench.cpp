// Probe bodies, JIT'd vs interpreted, on the real shared-memory maps (a
// Region laid out from the bundle's map specs, as the CLI's session makes
// it): ns per run of `@c = count()`, `@h = hist(arg0)`, `@[tid] = count()`;
// plus compile latency of a one-liner's program (lift + optimise + ORC) and
// of a remote image (lift + optimise + object + link).
//
//   ninja -C build-jit jit_bench && build-jit/tests/unit/jit/jit_bench
//   UBT_JIT_BENCH_DUMP=1 ... prints each program's optimised IR first.
#include "runtime/abi.h"
#include "runtime/jit/orc_jit.h"
#include "runtime/jit/remote_image.h"
#include "runtime/maps/helpers.h"
#include "runtime/vm/asm.h"
#include "runtime/vm/loader.h"
#include "tests/unit/jit/region_maps.h"
#include "tests/unit/jit/script_bundle.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

namespace {

using namespace ubtrace;

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "jit_bench: %s\n", what.c_str());
  std::exit(1);
}

jit::JitEngine &engine(jit::OptLevel level = jit::OptLevel::O2) {
  static std::map<jit::OptLevel, std::unique_ptr<jit::JitEngine>> engines;
  auto &e = engines[level];
  if (!e) {
    jit::JitOptions options;
    options.level = level;
    options.keep_ir = std::getenv("UBT_JIT_BENCH_DUMP") != nullptr;
    auto created = jit::JitEngine::create(options);
    if (!created)
      die(created.error());
    e = std::move(*created);
  }
  return *e;
}

// A one-liner's only host program, bound to a fresh region.
struct Probe {
  runtime::Bundle bundle;
  vm::Object object;
  vm::VerifiedProgram verified;
  std::unique_ptr<jit::test::RegionMaps> maps;
  vm::BoundProgram bound;
  std::shared_ptr<jit::JittedProgram> jitted;
};

std::unique_ptr<Probe> probe(const std::string &script,
                             jit::OptLevel level = jit::OptLevel::O2) {
  auto p = std::make_unique<Probe>();
  auto bundle = jit::test::compile_script(script);
  if (!bundle)
    die(script + ": " + bundle.error());
  p->bundle = std::move(*bundle);
  auto object = vm::load_object(p->bundle.object);
  if (!object)
    die(object.error());
  p->object = std::move(*object);
  auto verified = vm::verify(p->object.programs.at(0), p->object.maps,
                             jit::test::host_helper_protos(),
                             vm::ContextInfo{abi::kHostCtxSize, false, false});
  if (!verified)
    die(verified.error());
  p->verified = std::move(*verified);
  auto maps = jit::test::RegionMaps::for_bundle(p->bundle, p->object);
  if (!maps)
    die(maps.error());
  p->maps = std::make_unique<jit::test::RegionMaps>(std::move(*maps));
  const vm::HelperImpls &helpers = jit::test::region_helpers();
  auto bound = vm::bind_program(p->verified, p->maps->bindings(), helpers);
  if (!bound)
    die(bound.error());
  p->bound = std::move(*bound);
  auto jitted =
      engine(level).compile(p->verified, p->maps->bindings(), helpers);
  if (!jitted)
    die(jitted.error());
  p->jitted = *jitted;
  if (std::getenv("UBT_JIT_BENCH_DUMP"))
    std::fprintf(stderr, "=== %s\n%s\n", script.c_str(),
                 p->jitted->ir().c_str());
  return p;
}

const char *const kCount = "uprobe:/bin/sh:main { @c = count(); }";
const char *const kHist = "uprobe:/bin/sh:main { @h = hist(arg0); }";
const char *const kTidCount = "uprobe:/bin/sh:main { @[tid] = count(); }";

abi::HostProbeCtx ctx_with_arg0(uint64_t arg0) {
  abi::HostProbeCtx ctx{};
  ctx.regs.rdi = arg0;
  return ctx;
}

// arg0 walks through many hist buckets, the same sequence for both engines.
uint64_t next_arg(uint64_t i) {
  return (i * 0x9e3779b97f4a7c15ull) >> (i % 61);
}

void run_jit(benchmark::State &state, const char *script) {
  auto p = probe(script);
  abi::HostProbeCtx ctx = ctx_with_arg0(1);
  uint64_t i = 0;
  for (auto _ : state) {
    ctx.regs.rdi = next_arg(i++);
    benchmark::DoNotOptimize(p->jitted->run(&ctx));
  }
}

void run_interpreter(benchmark::State &state, const char *script) {
  auto p = probe(script);
  abi::HostProbeCtx ctx = ctx_with_arg0(1);
  uint64_t i = 0;
  for (auto _ : state) {
    ctx.regs.rdi = next_arg(i++);
    benchmark::DoNotOptimize(vm::run(p->bound, &ctx).r0);
  }
}

void BM_Count_Jit(benchmark::State &s) {
  run_jit(s, kCount);
}
void BM_Count_Interpreter(benchmark::State &s) {
  run_interpreter(s, kCount);
}
void BM_Hist_Jit(benchmark::State &s) {
  run_jit(s, kHist);
}
void BM_Hist_Interpreter(benchmark::State &s) {
  run_interpreter(s, kHist);
}
void BM_TidCount_Jit(benchmark::State &s) {
  run_jit(s, kTidCount);
}
void BM_TidCount_Interpreter(benchmark::State &s) {
  run_interpreter(s, kTidCount);
}
BENCHMARK(BM_Count_Jit);
BENCHMARK(BM_Count_Interpreter);
BENCHMARK(BM_Hist_Jit);
BENCHMARK(BM_Hist_Interpreter);
BENCHMARK(BM_TidCount_Jit);
BENCHMARK(BM_TidCount_Interpreter);

// count() as it would be on a per-slot array (what bpftrace uses for scalar
// maps; codegen uses a per-slot hash): hand-assembled, same helpers.
void count_on_array(benchmark::State &state, bool jit) {
  vm::Object object;
  vm::MapDef map;
  map.name = "c";
  map.type = BPF_MAP_TYPE_PERCPU_ARRAY;
  map.key_size = 4;
  map.value_size = 8;
  map.max_entries = 1;
  object.maps = {map};
  auto maps = jit::test::RegionMaps::for_object(object);
  if (!maps)
    die(maps.error());
  vm::Program prog{"count",
                   "count",
                   {VM_ST_MEM(BPF_W, 10, -4, 0), VM_MOV64_REG(2, 10),
                    VM_ALU64_IMM(BPF_ADD, 2, -4), VM_LD_MAP(1, 0),
                    VM_CALL_HELPER(BPF_FUNC_map_lookup_elem),
                    VM_JMP_IMM(BPF_JEQ, 0, 0, 3), VM_LDX_MEM(BPF_DW, 1, 0, 0),
                    VM_ALU64_IMM(BPF_ADD, 1, 1), VM_STX_MEM(BPF_DW, 0, 1, 0),
                    VM_MOV64_IMM(0, 0), VM_EXIT()},
                   {}};
  auto v = vm::verify(prog, object.maps, vm::standard_helpers(),
                      vm::ContextInfo{abi::kHostCtxSize});
  if (!v)
    die(v.error());
  const vm::HelperImpls &helpers = jit::test::region_helpers();
  auto bound = vm::bind_program(*v, maps->bindings(), helpers);
  auto jitted = engine().compile(*v, maps->bindings(), helpers);
  if (!bound || !jitted)
    die("cannot prepare count on an array");
  abi::HostProbeCtx ctx{};
  for (auto _ : state)
    benchmark::DoNotOptimize(jit ? (*jitted)->run(&ctx)
                                 : vm::run(*bound, &ctx).r0);
}
void BM_CountPerSlotArray_Jit(benchmark::State &s) {
  count_on_array(s, true);
}
void BM_CountPerSlotArray_Interpreter(benchmark::State &s) {
  count_on_array(s, false);
}
BENCHMARK(BM_CountPerSlotArray_Jit);
BENCHMARK(BM_CountPerSlotArray_Interpreter);

// The floor under count(): the map helper and the increment, called from C++.
void BM_Count_DirectHelperCall(benchmark::State &state) {
  auto p = probe(kCount);
  void *map = reinterpret_cast<void *>(p->maps->bindings().at(0).handle);
  uint32_t key = 0;
  for (auto _ : state) {
    auto *v = static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
    if (v)
      *v += 1;
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_Count_DirectHelperCall);

// Compile latency of a one-liner's program: lift + optimise + ORC codegen.
void compile_latency(benchmark::State &state, jit::OptLevel level) {
  auto p = probe(kCount, level);
  double lift = 0, opt = 0, codegen = 0;
  for (auto _ : state) {
    auto c = engine(level).compile(p->verified, p->maps->bindings(),
                                   jit::test::region_helpers());
    if (!c)
      die(c.error());
    lift += double((*c)->times().lift_ns);
    opt += double((*c)->times().optimize_ns);
    codegen += double((*c)->times().codegen_ns);
  }
  double n = double(state.iterations());
  state.counters["lift_us"] = lift / n / 1e3;
  state.counters["optimize_us"] = opt / n / 1e3;
  state.counters["codegen_us"] = codegen / n / 1e3;
}
void BM_CompileCount_O2(benchmark::State &s) {
  compile_latency(s, jit::OptLevel::O2);
}
void BM_CompileCount_O3(benchmark::State &s) {
  compile_latency(s, jit::OptLevel::O3);
}
BENCHMARK(BM_CompileCount_O2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CompileCount_O3)->Unit(benchmark::kMicrosecond);

// What the CLI pays once: a fresh engine (LLJIT, target machine) and its
// first compile.
void BM_ColdEngineAndFirstCompile(benchmark::State &state) {
  auto p = probe(kCount);
  for (auto _ : state) {
    auto e = jit::JitEngine::create();
    if (!e)
      die(e.error());
    auto c = (*e)->compile(p->verified, p->maps->bindings(),
                           jit::test::region_helpers());
    if (!c)
      die(c.error());
    benchmark::DoNotOptimize((*c)->entry());
  }
}
BENCHMARK(BM_ColdEngineAndFirstCompile)->Unit(benchmark::kMicrosecond);

// The agent's path: the same program as a remote image, compiled and linked.
void BM_RemoteImageCount(benchmark::State &state) {
  auto p = probe(kCount);
  auto constants = jit::map_constants(p->maps->bindings());
  jit::RemoteProgram rp{&p->verified, "probe"};
  jit::SymbolTable symbols;
  for (size_t id = 0; id < jit::test::region_helpers().by_id().size(); ++id)
    symbols[jit::helper_symbol(int32_t(id))] = 0x7f0000001000 + id * 16;
  for (auto _ : state) {
    auto obj = jit::compile_remote_object(std::span(&rp, 1), constants);
    if (!obj)
      die(obj.error());
    auto image = jit::link_remote_image(*obj, 0x300000000000, symbols);
    if (!image)
      die(image.error());
    benchmark::DoNotOptimize(image->bytes.data());
  }
}
BENCHMARK(BM_RemoteImageCount)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
