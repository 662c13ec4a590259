// Round trips through runtime/hook/vector_moves.h (vector_moves_rig.cpp,
// general registers only) for vector_moves_test.cpp.
#pragma once

#include "runtime/hook/cpu_features.h"

#include <cstdint>

namespace ubtrace::runtime::hook::testing {

// What the "traced code" holds at the save: SSE values in xmm0-15 with
// every upper half and AVX-512 component initial; AVX values in ymm0-15
// (AVX-512 components initial); values in every register the CPU has.
enum class Start { Sse, Avx, Everything };

struct MovesOutcome {
  bool low_kept = false;   // xmm/ymm/zmm0-15 as loaded, at the width loaded
  bool high_kept = true;   // zmm16-31 as loaded (else zero), AVX-512
  bool opmask_kept = true; // k1-7 as loaded (else zero), AVX-512
  bool mxcsr_kept = false;
  uint64_t in_use_before = 0, in_use_after = 0; // XINUSE around the trip
};

// Loads patterns as `start` says, saves, lets a "probe" write every vector
// register and MXCSR if `clobber`, restores, and reports what came back.
MovesOutcome moves_round_trip(const CpuFeatures &cpu, Start start,
                              bool clobber);

} // namespace ubtrace::runtime::hook::testing
