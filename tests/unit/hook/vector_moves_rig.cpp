// The round trips vector_moves_test.cpp checks, built with general
// registers only (as the dispatcher is): between the inline assembly
// blocks the compiler keeps off the vector registers, so what the blocks
// load is what save() sees and what restore() leaves is what they store.
#include "tests/unit/hook/vector_moves_rig.h"

#include "runtime/hook/vector_moves.h"

namespace ubtrace::runtime::hook::testing {
namespace {

alignas(64) uint8_t g_in_low[16][64], g_in_high[16][64];
alignas(64) uint8_t g_out_low[16][64], g_out_high[16][64];
uint64_t g_k_in[8], g_k_out[8];
alignas(64) uint8_t g_init_area[8192]; // zeros: XSTATE_BV 0, every
                                       // component to its initial state

bool same(const uint8_t *a, const uint8_t *b, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

bool zero(const uint8_t *a, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (a[i])
      return false;
  return true;
}

void fill() {
  for (unsigned r = 0; r < 16; r++)
    for (unsigned b = 0; b < 64; b++) {
      reinterpret_cast<volatile uint8_t *>(g_in_low[r])[b] =
          static_cast<uint8_t>(r * 37 + b * 11 + 1);
      reinterpret_cast<volatile uint8_t *>(g_in_high[r])[b] =
          static_cast<uint8_t>(r * 53 + b * 7 + 3);
    }
  for (unsigned i = 0; i < 8; i++)
    reinterpret_cast<volatile uint64_t *>(g_k_in)[i] =
        0x0123456789abcdefull * (i + 1);
}

} // namespace

#define LOW ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
#define HIGH ".irp i,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
#define KS ".irp i,1,2,3,4,5,6,7\n\t"

MovesOutcome moves_round_trip(const CpuFeatures &cpu, Start start,
                              bool clobber) {
  MovesOutcome o;
  const bool clean = start == Start::Sse;
  const bool zmm = cpu.width == VectorWidth::Zmm && start == Start::Everything;
  fill();
  if (start != Start::Everything) {
    // The upper halves and the AVX-512 components to their initial state,
    // then SSE values in xmm0-15 or AVX values in ymm0-15.
    uint32_t mask = static_cast<uint32_t>(cpu.xsave_mask) & 0xe4;
    __asm__ volatile("xrstor64 (%0)" ::"r"(g_init_area), "a"(mask), "d"(0)
                     : "memory");
    if (clean)
      __asm__ volatile(LOW
                       "movdqu \\i*64(%0), %%xmm\\i\n\t.endr" ::"r"(g_in_low)
                       : "memory");
    else
      __asm__ volatile(LOW
                       "vmovdqu \\i*64(%0), %%ymm\\i\n\t.endr" ::"r"(g_in_low)
                       : "memory");
  } else if (zmm) {
    __asm__ volatile(LOW "vmovdqu64 \\i*64(%0), %%zmm\\i\n\t.endr\n\t" HIGH
                         "vmovdqu64 (\\i-16)*64(%1), %%zmm\\i\n\t.endr\n\t" KS
                         "kmovw (\\i-1)*8(%2), %%k\\i\n\t.endr" ::"r"(g_in_low),
                     "r"(g_in_high), "r"(g_k_in)
                     : "memory");
  } else {
    __asm__ volatile(LOW "vmovdqu \\i*64(%0), %%ymm\\i\n\t.endr" ::"r"(g_in_low)
                     : "memory");
  }
  uint32_t mxcsr_before = 0, mxcsr_after = 0, mxcsr_probe = 0x7f80;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr_before));
  o.in_use_before = vector_moves::xinuse();
  MovedVectors kept;
  vector_moves::save(kept, cpu);
  if (clobber) {
    // What a probe path could leave: every register all ones (dirty upper
    // halves), and MXCSR rounding toward zero.
    __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
                     ".irp i,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
                     "vmovdqa %%ymm0, %%ymm\\i\n\t.endr\n\t"
                     "ldmxcsr %0" ::"m"(mxcsr_probe)
                     : "memory");
    if (cpu.width == VectorWidth::Zmm)
      __asm__ volatile(HIGH "vpternlogd $0xff, %%zmm\\i, %%zmm\\i, %%zmm\\i\n\t"
                            ".endr\n\t" KS "kxnorw %%k\\i, %%k\\i, %%k\\i\n\t"
                            ".endr" ::
                                : "memory");
  }
  vector_moves::restore(kept, cpu);
  o.in_use_after = vector_moves::xinuse();
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr_after));
  if (clean) {
    __asm__ volatile(LOW "movdqu %%xmm\\i, \\i*64(%0)\n\t.endr" ::"r"(g_out_low)
                     : "memory");
    o.low_kept = true;
    for (unsigned r = 0; r < 16; r++)
      o.low_kept &= same(g_in_low[r], g_out_low[r], 16);
  } else if (zmm) {
    __asm__ volatile(LOW
                     "vmovdqu64 %%zmm\\i, \\i*64(%0)\n\t.endr" ::"r"(g_out_low)
                     : "memory");
    o.low_kept = same(g_in_low[0], g_out_low[0], sizeof g_in_low);
  } else {
    // AVX values: bits 256-511 (on AVX-512) were initial, zero.
    if (cpu.width == VectorWidth::Zmm)
      __asm__ volatile(
          LOW "vmovdqu64 %%zmm\\i, \\i*64(%0)\n\t.endr" ::"r"(g_out_low)
          : "memory");
    else
      __asm__ volatile(LOW
                       "vmovdqu %%ymm\\i, \\i*64(%0)\n\t.endr" ::"r"(g_out_low)
                       : "memory");
    o.low_kept = true;
    for (unsigned r = 0; r < 16; r++)
      o.low_kept &=
          same(g_in_low[r], g_out_low[r], 32) &&
          (cpu.width != VectorWidth::Zmm || zero(g_out_low[r] + 32, 32));
  }
  if (cpu.width == VectorWidth::Zmm) {
    // With only SSE or AVX values loaded, zmm16-31 and k1-7 were initial:
    // zero.
    __asm__ volatile(HIGH
                     "vmovdqu64 %%zmm\\i, (\\i-16)*64(%0)\n\t.endr\n\t" KS
                     "kmovw %%k\\i, (\\i-1)*8(%1)\n\t.endr" ::"r"(g_out_high),
                     "r"(g_k_out)
                     : "memory");
    // kmovw stores 16 bits: compare those.
    bool k = true;
    for (unsigned i = 0; i < 7; i++) {
      uint16_t want = zmm ? static_cast<uint16_t>(g_k_in[i]) : 0;
      k &= static_cast<uint16_t>(g_k_out[i]) == want;
    }
    o.high_kept = zmm ? same(g_in_high[0], g_out_high[0], sizeof g_in_high)
                      : zero(g_out_high[0], sizeof g_out_high);
    o.opmask_kept = k;
  }
  o.mxcsr_kept = mxcsr_after == mxcsr_before;
  __asm__ volatile("ldmxcsr %0" ::"m"(mxcsr_before));
  return o;
}

} // namespace ubtrace::runtime::hook::testing
