// Random valid programs for the JIT's differential tests and fuzzer: what
// vm_program_gen.h makes (straight-line ALU, memory, branches, loops, a
// call), used as subprogram bodies, composed into a program that also calls
// helpers: map lookups, updates (plain and atomic increments of the value),
// deletes, bpf_loop with a callback that runs a body per iteration,
// bpf_for_each_map_elem over a hash map and an array, and a `record` helper
// that logs its scalar arguments. Every program passes the verifier against
// gen_maps() and gen_helper_protos() and terminates.
//
// Observable results: r0, the ctx bytes, the maps' contents, record_log().
// Iteration order of the hash map is the map's business, so for_each
// callbacks over it fold commutatively and never stop early.
#pragma once

#include "runtime/vm/helpers.h"
#include "runtime/vm/insn.h"
#include "runtime/vm/interpreter.h"
#include "runtime/vm/object.h"
#include "tests/fuzz/vm_program_gen.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ubtrace::jit::fuzz {

// A helper of ubtrace's own range: u64 record(u64 a, ..., u64 e) appends
// its arguments to record_log() and returns a hash of them.
inline constexpr int32_t kRecordHelper = 10900;

// Map 0: hash, u64 -> u64, 16 entries. Map 1: array, 4 x u64.
std::vector<vm::MapDef> gen_maps();
// standard_helpers() and record.
const vm::HelperTable &gen_helper_protos();
// `base` (the map helpers) plus record.
vm::HelperImpls gen_helper_impls(const vm::HelperImpls &base);
// This thread's record() calls, five arguments each.
std::vector<uint64_t> &record_log();

struct JitGenOptions {
  uint32_t ctx_size = 64;    // readable ctx bytes, a multiple of 8
  uint32_t max_segments = 6; // helper uses and body calls in main
  uint32_t max_bodies = 3;   // generated subprogram bodies
  vm::fuzz::GenOptions body{.max_insns = 100, .max_path_doublings = 4};
};

// The same bytes and options always give the same program.
std::vector<vm::Insn> generate_jit_program(std::span<const uint8_t> data,
                                           const JitGenOptions &options = {});

} // namespace ubtrace::jit::fuzz
