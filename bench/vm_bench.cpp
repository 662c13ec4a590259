// The interpreter's cost per instruction and per probe-like run, and the
// verifier's time on a loop-heavy program. The JIT is the fast path; these
// numbers say what the fallback costs.
//   ninja -C build-vm vm_bench && build-vm/bench/vm_bench  (path may vary)
#include "runtime/vm/asm.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/verifier.h"

#include <benchmark/benchmark.h>

using namespace ubtrace::vm;

namespace {

BoundProgram prepare(std::vector<Insn> insns, std::vector<MapDef> maps = {},
                     std::vector<MapBinding> bindings = {},
                     HelperImpls helpers = {}) {
  Program p{"bench", "bench", std::move(insns), {}};
  auto v = verify(p, maps, standard_helpers(), ContextInfo{64});
  if (!v)
    abort();
  auto b = bind_program(*v, bindings, helpers);
  if (!b)
    abort();
  return std::move(*b);
}

// A loop of N iterations with 6 instructions each.
std::vector<Insn> loop_program(int n) {
  return {VM_LDX_MEM(BPF_DW, 2, 1, 0),
          VM_MOV64_IMM(0, 0),
          VM_MOV64_IMM(3, 0),
          VM_ALU64_REG(BPF_XOR, 0, 3),
          VM_ALU64_IMM(BPF_MUL, 0, 31),
          VM_ALU64_REG(BPF_ADD, 0, 2),
          VM_ALU64_IMM(BPF_ADD, 3, 1),
          VM_JMP_IMM(BPF_JLT, 3, n, -5),
          VM_EXIT()};
}

void BM_InterpretLoop(benchmark::State &state) {
  BoundProgram prog = prepare(loop_program(1000));
  uint64_t ctx[8] = {7};
  uint64_t insns = 0;
  for (auto _ : state) {
    RunResult r = run(prog, ctx);
    benchmark::DoNotOptimize(r.r0);
    insns += r.insns;
  }
  state.counters["ns/insn"] = benchmark::Counter(
      double(insns), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_InterpretLoop);

uint64_t counter_value;
uint64_t lookup(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return reinterpret_cast<uint64_t>(&counter_value);
}

// @c = count(): lookup, NULL check, atomic add: a probe's whole program.
void BM_InterpretCount(benchmark::State &state) {
  MapDef map;
  map.name = "c";
  map.type = BPF_MAP_TYPE_ARRAY;
  map.key_size = 4;
  map.value_size = 8;
  map.max_entries = 1;
  HelperImpls helpers;
  helpers.set(BPF_FUNC_map_lookup_elem, lookup);
  BoundProgram prog = prepare(
      {VM_ST_MEM(BPF_W, 10, -4, 0), VM_MOV64_REG(2, 10),
       VM_ALU64_IMM(BPF_ADD, 2, -4), VM_LD_MAP(1, 0),
       VM_CALL_HELPER(BPF_FUNC_map_lookup_elem), VM_JMP_IMM(BPF_JEQ, 0, 0, 2),
       VM_MOV64_IMM(1, 1), VM_ATOMIC(BPF_DW, BPF_ADD, 0, 1, 0),
       VM_MOV64_IMM(0, 0), VM_EXIT()},
      {map}, {MapBinding{1, &counter_value, nullptr}}, helpers);
  uint64_t ctx[8] = {};
  for (auto _ : state)
    benchmark::DoNotOptimize(run(prog, ctx).r0);
}
BENCHMARK(BM_InterpretCount);

// Verifying nested loops: 20 x 20 iterations, each explored.
void BM_VerifyNestedLoops(benchmark::State &state) {
  std::vector<Insn> prog = {VM_LDX_MEM(BPF_DW, 1, 1, 0),
                            VM_MOV64_IMM(0, 0),
                            VM_MOV64_IMM(2, 0),
                            VM_MOV64_IMM(3, 0),
                            VM_MOV64_REG(4, 2),
                            VM_ALU64_REG(BPF_XOR, 4, 3),
                            VM_ALU64_REG(BPF_AND, 4, 1),
                            VM_JMP_IMM(BPF_JEQ, 4, 0, 1),
                            VM_ALU64_IMM(BPF_ADD, 0, 1),
                            VM_ALU64_IMM(BPF_ADD, 3, 1),
                            VM_JMP_IMM(BPF_JLT, 3, 20, -7),
                            VM_ALU64_IMM(BPF_ADD, 2, 1),
                            VM_JMP_IMM(BPF_JLT, 2, 20, -10),
                            VM_EXIT()};
  Program p{"nested", "nested", prog, {}};
  uint64_t processed = 0;
  for (auto _ : state) {
    auto v = verify(p, {}, standard_helpers(), ContextInfo{64});
    if (!v)
      abort();
    processed = v->stats.processed_insns;
  }
  state.counters["processed"] = double(processed);
}
BENCHMARK(BM_VerifyNestedLoops);

} // namespace

BENCHMARK_MAIN();
