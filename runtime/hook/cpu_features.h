// What the CPU and kernel give this process, read once at the first install:
// how to save vector state around a handler, the user segment selectors that
// pt_regs reports, and whether user shadow stacks (CET) are on.
#pragma once

#include <cstdint>

namespace ubtrace::runtime::hook {

enum class VectorSaveInsn : uint8_t {
  Xsavec, // compacted, skips components in their initial state
  Xsave,  // standard form
  Fxsave, // SSE state only (no XSAVE support): 512 bytes
};

// The widest vector registers the OS enabled.
enum class VectorWidth : uint8_t { Xmm, Ymm, Zmm };

struct CpuFeatures {
  VectorSaveInsn save_insn = VectorSaveInsn::Fxsave;
  // XSAVE components saved: x87, SSE, AVX, AVX-512 (opmask, ZMM_Hi256,
  // Hi16_ZMM), as far as XCR0 enables them. AMX tiles are left out: compiled
  // C code never touches them.
  uint64_t xsave_mask = 0;
  VectorWidth width = VectorWidth::Xmm;
  // XGETBV with ECX=1 reports which components are in use (XINUSE): the
  // probe path keeps vector registers by moves (vector_moves.h).
  bool xinuse = false;
  // AVX512BW: the opmask registers are 64 bits wide (else 16).
  bool opmask64 = false;
  // Bytes of the save area (a multiple of 64).
  uint32_t save_area_size = 512;
  uint16_t user_cs = 0x33;
  uint16_t user_ss = 0x2B;
  // The kernel enabled a user shadow stack for this thread: replacing return
  // addresses, and emulating a call by push+jmp, would fault.
  bool shadow_stack = false;
  // LAHF/SAHF work in 64-bit mode (all but the earliest x86-64 CPUs): the
  // trampolines restore flags with them instead of popfq.
  bool lahf_sahf = false;
  // CMPXCHG16B: a patch within one aligned 16-byte block is written in one
  // atomic store (code_patcher.h).
  bool cmpxchg16b = false;
};

// Read once; cheap afterwards.
const CpuFeatures &cpu_features();

// The same, for the probe path: no detection (a system call through libc)
// there; every install has detected them before a hook can fire.
const CpuFeatures &detected_cpu_features();

} // namespace ubtrace::runtime::hook
