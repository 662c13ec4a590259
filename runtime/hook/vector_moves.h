// Keeping the traced code's vector registers around the probe path by
// moves instead of XSAVE/XRSTOR, for the sites where any of them may be
// live: a program's own inline `syscall` (runtime/agent/syscall_fast.cpp)
// and a hook away from a function's entry (a FUNC+OFFSET uprobe,
// trampoline.h).
//
// Why: XSAVEC + XRSTOR cost 160-260 ns on some virtual machines (the
// machines this project is built on among them, bench/RESULTS.md), more
// than the rest of a probed system call; XGETBV and the moves cost 45-60
// ns there.
//
// What is kept: xmm/ymm/zmm0-15 at the width in use, zmm16-31 and the
// opmask registers k0-7 on AVX-512, and MXCSR. The width comes from XINUSE
// (XGETBV with ECX=1), so a component in its initial state stays in it:
// upper halves that were clean are cleaned again with VZEROUPPER (a
// program without AVX code must not be left paying for dirty upper state
// on every SSE instruction), and zmm16-31 and k0-7 are zeroed only when
// the probe path wrote them.
//
// Not kept: the x87 and MMX state. Nothing on the probe path uses it: the
// programs come from BPF (no floating point), the agent's code and its
// helpers never use long double, and the libc functions the path may
// reach (string and memory functions) use SSE, AVX and AVX-512 registers
// only. tests/testprogs/syscaller.c (vectors) holds live x87 values across
// a probed call to check it.
//
// Without XGETBV ECX=1 (CPUs before ~2015) callers use XSAVE as before.
#pragma once

#include "runtime/hook/cpu_features.h"

#include <cstdint>

// For a function that holds a MovedVectors: never instrumented, as a
// sanitizer's code at its entry (redzones poisoned through its runtime,
// which may use vector registers) would run before the save.
#define UBT_KEEPS_VECTORS __attribute__((no_sanitize("address", "undefined")))

namespace ubtrace::runtime::hook {

struct alignas(64) MovedVectors {
  uint8_t low[16][64];  // xmm/ymm/zmm0-15
  uint8_t high[16][64]; // zmm16-31
  uint64_t k[8];
  uint64_t in_use; // XINUSE at the save
  uint32_t mxcsr;
};

namespace vector_moves {

inline constexpr uint64_t kAvx = 1u << 2, kOpmask = 1u << 5,
                          kZmmHi256 = 1u << 6, kHi16Zmm = 1u << 7;

inline uint64_t xinuse() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return lo | (static_cast<uint64_t>(hi) << 32);
}

// GNU as repeats each move over the registers (.irp).
#define UBT_VM_LOW ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
#define UBT_VM_HIGH ".irp i,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
#define UBT_VM_K ".irp i,0,1,2,3,4,5,6,7\n\t"

// Saves what the probe path may change (see above); `cpu` from
// detected_cpu_features(), cpu.xinuse true.
__attribute__((always_inline)) inline void save(MovedVectors &m,
                                                const CpuFeatures &cpu) {
  const uint64_t in_use = xinuse();
  m.in_use = in_use;
  __asm__ volatile("stmxcsr %0" : "=m"(m.mxcsr));
  if (cpu.width == VectorWidth::Zmm && (in_use & kZmmHi256))
    __asm__ volatile(UBT_VM_LOW
                     "vmovdqu64 %%zmm\\i, \\i*64(%0)\n\t.endr" ::"r"(m.low)
                     : "memory");
  else if (cpu.width != VectorWidth::Xmm && (in_use & (kAvx | kZmmHi256)))
    __asm__ volatile(UBT_VM_LOW
                     "vmovdqu %%ymm\\i, \\i*64(%0)\n\t.endr" ::"r"(m.low)
                     : "memory");
  else
    __asm__ volatile(UBT_VM_LOW
                     "movdqu %%xmm\\i, \\i*64(%0)\n\t.endr" ::"r"(m.low)
                     : "memory");
  // Dirty upper halves, now saved, are cleaned for the path's SSE code
  // (the transition penalty of older CPUs, trampoline.cpp).
  if (cpu.width != VectorWidth::Xmm && (in_use & (kAvx | kZmmHi256)))
    __asm__ volatile("vzeroupper" ::: "memory");
  if (cpu.width != VectorWidth::Zmm)
    return;
  if (in_use & kHi16Zmm)
    __asm__ volatile(
        UBT_VM_HIGH "vmovdqu64 %%zmm\\i, (\\i-16)*64(%0)\n\t.endr" ::"r"(m.high)
        : "memory");
  if (in_use & kOpmask) {
    if (cpu.opmask64)
      __asm__ volatile(UBT_VM_K "kmovq %%k\\i, \\i*8(%0)\n\t.endr" ::"r"(m.k)
                       : "memory");
    else
      __asm__ volatile(UBT_VM_K "kmovw %%k\\i, \\i*8(%0)\n\t.endr" ::"r"(m.k)
                       : "memory");
  }
}

// Puts back what save() kept, and components that were in their initial
// state back in it.
__attribute__((always_inline)) inline void restore(const MovedVectors &m,
                                                   const CpuFeatures &cpu) {
  const uint64_t in_use = m.in_use;
  if (cpu.width == VectorWidth::Zmm && (in_use & kZmmHi256)) {
    __asm__ volatile(UBT_VM_LOW
                     "vmovdqu64 \\i*64(%0), %%zmm\\i\n\t.endr" ::"r"(m.low)
                     : "memory");
  } else if (cpu.width != VectorWidth::Xmm && (in_use & (kAvx | kZmmHi256))) {
    // A VEX move zeroes bits 256-511: they were clean.
    __asm__ volatile(UBT_VM_LOW
                     "vmovdqu \\i*64(%0), %%ymm\\i\n\t.endr" ::"r"(m.low)
                     : "memory");
  } else {
    // Clean upper halves: cleaned again, then the SSE moves, which keep
    // them, put the low halves back.
    if (cpu.width != VectorWidth::Xmm)
      __asm__ volatile("vzeroupper" ::: "memory");
    __asm__ volatile(UBT_VM_LOW
                     "movdqu \\i*64(%0), %%xmm\\i\n\t.endr" ::"r"(m.low)
                     : "memory");
  }
  if (cpu.width == VectorWidth::Zmm) {
    // Components that were initial and that the path wrote: zeroed (their
    // initial value); left alone when still initial.
    const uint64_t now =
        (in_use & (kHi16Zmm | kOpmask)) != (kHi16Zmm | kOpmask) ? xinuse() : 0;
    if (in_use & kHi16Zmm)
      __asm__ volatile(
          UBT_VM_HIGH
          "vmovdqu64 (\\i-16)*64(%0), %%zmm\\i\n\t.endr" ::"r"(m.high)
          : "memory");
    else if (now & kHi16Zmm)
      __asm__ volatile(UBT_VM_HIGH "vpxord %%zmm\\i, %%zmm\\i, %%zmm\\i\n\t"
                                   ".endr" ::
                                       : "memory");
    if (in_use & kOpmask) {
      if (cpu.opmask64)
        __asm__ volatile(UBT_VM_K "kmovq \\i*8(%0), %%k\\i\n\t.endr" ::"r"(m.k)
                         : "memory");
      else
        __asm__ volatile(UBT_VM_K "kmovw \\i*8(%0), %%k\\i\n\t.endr" ::"r"(m.k)
                         : "memory");
    } else if (now & kOpmask) {
      __asm__ volatile(UBT_VM_K "kxorw %%k\\i, %%k\\i, %%k\\i\n\t.endr" ::
                           : "memory");
    }
  }
  __asm__ volatile("ldmxcsr %0" ::"m"(m.mxcsr));
}

#undef UBT_VM_LOW
#undef UBT_VM_HIGH
#undef UBT_VM_K

} // namespace vector_moves
} // namespace ubtrace::runtime::hook
