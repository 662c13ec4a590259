// The ABI between generated BPF programs and the runtimes that run them:
// the probe context, the events programs send, the internal maps, and the
// helper ids ubtrace adds to the kernel's. Codegen writes against it; the
// CLI runtime, the in-target agent and the GPU lifter implement it.
#pragma once

#include <cstdint>

namespace ubtrace::abi {

// ---- Probe context (the program's r1) ----
//
// Host probes (uprobe, uretprobe, usdt, and begin/end/interval in the CLI)
// get the x86-64 kernel pt_regs layout first, so code written for kernel
// uprobes reads arguments at the same offsets, then ubtrace's own fields.
enum PtRegs : uint32_t {
  kR15 = 0,
  kR14 = 8,
  kR13 = 16,
  kR12 = 24,
  kRbp = 32,
  kRbx = 40,
  kR11 = 48,
  kR10 = 56,
  kR9 = 64,
  kR8 = 72,
  kRax = 80,
  kRcx = 88,
  kRdx = 96,
  kRsi = 104,
  kRdi = 112,
  kOrigRax = 120,
  kRip = 128,
  kCs = 136,
  kEflags = 144,
  kRsp = 152,
  kSs = 160,
  kPtRegsSize = 168,
};

struct PtRegsLayout {
  uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi,
      rdi, orig_rax, rip, cs, eflags, rsp, ss;
};
static_assert(sizeof(PtRegsLayout) == kPtRegsSize);

// USDT arguments are decoded by the agent from the site's note (register,
// memory or constant) at each hit: programs read them at a fixed place.
inline constexpr uint32_t kUsdtMaxArgs = 12;

struct HostProbeCtx {
  PtRegsLayout regs;
  uint64_t probe_id; // which probe fired: an id the CLI maps to its name
  uint64_t func_ip;  // address of the probed function (`func`)
  uint64_t usdt_args[kUsdtMaxArgs]; // USDT probes only
};
enum HostCtx : uint32_t {
  kCtxProbeId = kPtRegsSize,
  kCtxFuncIp = kPtRegsSize + 8,
  kCtxUsdtArgs = kPtRegsSize + 16,
  // Return probes that read `args`: rdi..r9 as they were at the function's
  // entry, in the first six USDT slots (a return probe has no USDT args).
  kCtxEntryArgs = kCtxUsdtArgs,
  kHostCtxSize = kPtRegsSize + 16 + 8 * kUsdtMaxArgs,
};
static_assert(sizeof(HostProbeCtx) == kHostCtxSize);

// Function arguments in registers (System V x86-64), arg0..arg5.
inline constexpr uint32_t kArgRegs[6] = {kRdi, kRsi, kRdx, kRcx, kR8, kR9};

// GPU probes get runtime/gpu/probe_abi.h's context block:
//   u64 kernel_id, u32 arg_count, u32 site, u64 args[].
enum GpuCtx : uint32_t {
  kGpuCtxKernelId = 0,
  kGpuCtxArgCount = 8,
  kGpuCtxSite = 12,
  kGpuCtxArgs = 16,
};

// ---- Helpers ----
// Kernel helper ids keep their numbers (<linux/bpf.h>). ubtrace's own, for
// what has no kernel helper, live above the kernel's range.
enum Helper : int32_t {
  // GPU special registers (the lifter turns these into NVPTX intrinsics).
  kHelperGpuThreadIdxX = 10001,
  kHelperGpuThreadIdxY,
  kHelperGpuThreadIdxZ,
  kHelperGpuBlockIdxX,
  kHelperGpuBlockIdxY,
  kHelperGpuBlockIdxZ,
  kHelperGpuBlockDimX,
  kHelperGpuBlockDimY,
  kHelperGpuBlockDimZ,
  kHelperGpuGridDimX,
  kHelperGpuGridDimY,
  kHelperGpuGridDimZ,
  kHelperGpuSmId,
  kHelperGpuWarpId,
  kHelperGpuLaneId,
  kHelperGpuGlobalTimer,
  // Host: ubt_related_comm(buf, size, which): the parent's or the thread
  // group leader's name (kRelatedParent, kRelatedLeader), NUL-padded.
  kHelperRelatedComm = 10100,
  // Host: ubt_ppid(): the process's parent's pid (bpftrace's stdlib reads
  // it from the task; here, the kernel's answer to getppid).
  kHelperPpid = 10101,
  // Host: ubt_initial_pid_tgid(): get_current_pid_tgid's value as the
  // initial PID namespace numbers the thread (pid(init), tid(init)); 0
  // when not known (runtime/helpers/pid_view.h). get_current_pid_tgid
  // itself gives the CLI's view (bpftrace's curr_ns).
  kHelperInitialPidTgid = 10102,
};
enum RelatedTaskId : int32_t { kRelatedParent = 0, kRelatedLeader = 1 };

// ---- Events (sent through the events ring buffer) ----
enum class EventType : uint64_t {
  Printf = 1,     // id = printf format; then the arguments
  Exit = 2,       // id = exit code
  PrintMap = 3,   // id = map; then u64 top, u64 div
  ClearMap = 4,   // id = map
  ZeroMap = 5,    // id = map
  Time = 6,       // id = time format
  PrintValue = 7, // id = print type; then the value
  Join = 8,       // id = join separator; then u64 count, strings
  System = 9,     // id = system format; then the arguments
  Cat = 10,       // id = cat format; then the arguments
  Errorf = 11,    // id = printf format (error message)
  Warnf = 12,     // id = printf format (warning message)
  Signal = 13,    // id = signal number: send it to the current thread's process
  HelperError = 14, // id = helper check (-k); then i64 the helper's result
};

struct EventHeader {
  uint64_t type; // EventType
  uint64_t id;
};

// Join: up to kJoinMaxArgs strings of kJoinArgSize bytes each.
inline constexpr uint32_t kJoinMaxArgs = 16;

// ---- Internal maps (besides the script's) ----
// Names in the BPF object; MapRole in the bundle says the same.
inline constexpr const char *kEventsMap = "ubt_events"; // ring buffer
inline constexpr const char *kScratchMap =
    "ubt_scratch"; // per-slot bytes: [0] events, [1] large temporaries
inline constexpr const char *kGlobalsMap = "ubt_globals"; // Globals below
// `probe` as a string: entry N holds probe id N's name (NUL-padded,
// kProbeNameSize bytes), written by the CLI as ids are given out. Only
// in a bundle whose script uses `probe` as a string.
inline constexpr const char *kProbeNamesMap = "ubt_probe_names";
inline constexpr uint32_t kProbeNameSize = 256;
inline constexpr uint32_t kProbeNamesMax = 16384; // ids past it read ""

// The globals map's one value: Globals, then a u64 per Bundle::uaddrs.
struct Globals {
  uint64_t start_ns; // CLOCK_MONOTONIC at start, for `elapsed`
  uint64_t ncpus;    // slots of per-slot maps, for summing them in probes
  uint64_t cpid;     // the pid of the -c command, for `cpid`
  // CLOCK_REALTIME - CLOCK_MONOTONIC at start: tseries() intervals are
  // wall-clock intervals
  uint64_t realtime_offset_ns;
};

} // namespace ubtrace::abi
