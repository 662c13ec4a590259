#include "runtime/hook/cpu_features.h"

#include <atomic>
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

constexpr uint64_t kComponentsWanted =
    (1u << 0) | (1u << 1) | (1u << 2) | // x87, SSE, AVX
    (1u << 5) | (1u << 6) | (1u << 7);  // opmask, ZMM_Hi256, Hi16_ZMM

constexpr unsigned kArchShstkStatus = 0x5005; // <asm/prctl.h>, Linux 6.6
constexpr unsigned long kShstkEnabled = 1;    // ARCH_SHSTK_SHSTK

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  f.cmpxchg16b = (c & (1u << 13)) != 0;
  bool xsave = (c & (1u << 26)) && (c & (1u << 27)); // XSAVE and OSXSAVE
  if (xsave) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
    f.xsave_mask = xcr0 & kComponentsWanted;
    if ((xcr0 & 0xE6) == 0xE6) // SSE, AVX and the three AVX-512 components
      f.width = VectorWidth::Zmm;
    else if ((xcr0 & 0x6) == 0x6)
      f.width = VectorWidth::Ymm;
    __cpuid_count(0xD, 0, a, b, c, d);
    uint32_t size = b; // standard-form size for XCR0: bounds the compacted one
    f.save_area_size = (size + 63) & ~63u;
    __cpuid_count(0xD, 1, a, b, c, d);
    f.save_insn = (a & 2) ? VectorSaveInsn::Xsavec : VectorSaveInsn::Xsave;
    f.xinuse = (a & 4) != 0;
    __cpuid_count(7, 0, a, b, c, d);
    f.opmask64 = (b & (1u << 30)) != 0;
  }
  __cpuid(0x80000000, a, b, c, d);
  if (a >= 0x80000001) {
    __cpuid(0x80000001, a, b, c, d);
    f.lahf_sahf = c & 1;
  }
  uint16_t cs, ss;
  __asm__("mov %%cs, %0" : "=r"(cs));
  __asm__("mov %%ss, %0" : "=r"(ss));
  f.user_cs = cs;
  f.user_ss = ss;
  unsigned long shstk = 0;
  if (syscall(SYS_arch_prctl, kArchShstkStatus, &shstk) == 0)
    f.shadow_stack = (shstk & kShstkEnabled) != 0;
  return f;
}

CpuFeatures g_features;
std::atomic<bool> g_detected{false};

} // namespace

const CpuFeatures &cpu_features() {
  if (!g_detected.load(std::memory_order_acquire)) {
    g_features = detect(); // idempotent: racing threads write the same value
    g_detected.store(true, std::memory_order_release);
  }
  return g_features;
}

const CpuFeatures &detected_cpu_features() {
  return g_features;
}

} // namespace ubtrace::runtime::hook
