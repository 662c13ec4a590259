// Random valid eBPF programs from a byte string (a libFuzzer input): straight
// line ALU of every kind, loads and stores of every size on an initialised
// stack area, loads from ctx, atomics, forward branches, bounded loops
// (counted with constants) and a BPF-to-BPF call. Every program the
// generator makes passes the verifier and terminates, so a fuzzer can run
// it through the interpreter and the JIT and compare: r0, the stack fold in
// r0, and every ctx byte are the observable results.
#pragma once

#include "runtime/vm/insn.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ubtrace::vm::fuzz {

struct GenOptions {
  uint32_t max_insns = 400;    // the body stops growing past this
  uint32_t ctx_size = 64;      // readable ctx bytes (a multiple of 8)
  uint32_t stack_bytes = 64;   // stack area each frame initialises and uses
  uint32_t max_loop_trips = 6; // iterations of one loop
  uint32_t max_loop_depth = 2;
  // Branches that may split the verifier's paths, weighted by the loop
  // trips around them; bounds verification time.
  uint32_t max_path_doublings = 10;
  bool isa_v4 = true; // sdiv/smod, movsx, ldsx, bswap, gotol
  bool atomics = true;
  bool calls = true;
};

// The same bytes and options always give the same program.
std::vector<Insn> generate_program(std::span<const uint8_t> data,
                                   const GenOptions &options = {});

} // namespace ubtrace::vm::fuzz
