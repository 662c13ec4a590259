#include "runtime/inject/bootstrap_frame.h"

#include "runtime/inject/bootstrap_layout.h"

#include <cstring>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr int64_t kErestartsys = -512;
constexpr int64_t kErestartnointr = -513;
constexpr int64_t kErestartnohand = -514;
constexpr int64_t kErestartRestartblock = -516;
constexpr uint64_t kIa32RestartSyscall = 0;
constexpr uint64_t kSigSetmask = 2;

constexpr uint64_t kTrapFlag = 1 << 8;
constexpr uint64_t kDirectionFlag = 1 << 10;
constexpr uint64_t kResumeFlag = 1 << 16;
constexpr uint64_t kAlignmentCheck = 1 << 18;

// NT_X86_XSTATE, in the standard (non-compacted) XSAVE format: the legacy
// area, with XCR0 in its software-usable bytes, then the XSAVE header.
constexpr size_t kMxcsr = 24, kMxcsrMask = 28;
constexpr size_t kXcr0Word = 464;
constexpr uint64_t kFpSse = 3;
constexpr size_t kHeader = 512, kHeaderSize = 64;
constexpr uint64_t kTileData = uint64_t{1} << 18; // armed by XFD until used

bool is_restart(int64_t rax) {
  return rax == kErestartsys || rax == kErestartnointr ||
         rax == kErestartnohand || rax == kErestartRestartblock;
}

template <class T> T load(const std::vector<uint8_t> &bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

template <class T> void store(std::vector<uint8_t> &bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

uint64_t align_down(uint64_t value, uint64_t alignment) {
  return value & ~(alignment - 1);
}

} // namespace

user_regs_struct as_restarting(const user_regs_struct &entry) {
  user_regs_struct regs = entry;
  regs.rax = static_cast<uint64_t>(kErestartnointr);
  return regs;
}

bool needs_instruction_bytes(const user_regs_struct &regs) {
  return static_cast<int64_t>(regs.orig_rax) >= 0 &&
         is_restart(static_cast<int64_t>(regs.rax));
}

Result<InterruptedCall>
interrupted_call(const user_regs_struct &regs,
                 std::optional<std::array<uint8_t, 2>> instruction) {
  InterruptedCall call;
  call.resume_rip = regs.rip;
  call.resume_rax = regs.rax;
  if (!needs_instruction_bytes(regs))
    return call;
  if (!instruction)
    return make_error("the instruction of its system call cannot be read");
  bool syscall = (*instruction)[0] == 0x0f && (*instruction)[1] == 0x05;
  bool int80 = (*instruction)[0] == 0xcd && (*instruction)[1] == 0x80;
  if (!syscall && !int80)
    return make_error("it is in a system call entered by an instruction the "
                      "injector does not know");
  call.code = static_cast<int64_t>(regs.rax);
  call.resume_rip = regs.rip - 2;
  if (call.code == kErestartRestartblock) {
    call.kind = InterruptedCall::Kind::RestartBlock;
    call.resume_rax = syscall ? SYS_restart_syscall : kIa32RestartSyscall;
  } else {
    call.kind = InterruptedCall::Kind::Restart;
    call.resume_rax = regs.orig_rax;
  }
  return call;
}

Result<XsaveImage> check_xsave_image(const std::vector<uint8_t> &xstate) {
  if (xstate.size() < kHeader + kHeaderSize || xstate.size() > (1u << 20))
    return make_error("its XSAVE state has an implausible size (" +
                      std::to_string(xstate.size()) + " bytes)");
  XsaveImage image;
  image.size = static_cast<uint32_t>(xstate.size());
  // ptrace puts XCR0 where a signal frame has its software bytes.
  image.features = load<uint64_t>(xstate, kXcr0Word);
  if ((image.features & kFpSse) != kFpSse)
    return make_error("its XSAVE state names no x87/SSE state (XCR0 " +
                      std::to_string(image.features) + ")");
  uint64_t present = load<uint64_t>(xstate, kHeader);
  if (present & ~image.features)
    return make_error("its XSAVE state holds components outside XCR0");
  for (size_t at = kHeader + 8; at < kHeader + kHeaderSize; ++at)
    if (xstate[at] != 0) // not the standard format, or reserved bits set
      return make_error("its XSAVE state is not in the standard format");
  uint32_t mxcsr = load<uint32_t>(xstate, kMxcsr);
  uint32_t mxcsr_mask = load<uint32_t>(xstate, kMxcsrMask);
  if (mxcsr & ~(mxcsr_mask ? mxcsr_mask : 0xffbf))
    return make_error("its MXCSR has reserved bits set");
  // Features armed by XFD (AMX tile data) fault when restored unless the
  // thread uses them already.
  image.restore_mask = image.features & ~(kTileData & ~present);
  return image;
}

Result<BootstrapFrame> build_bootstrap_frame(const BootstrapInput &in) {
  const user_regs_struct &regs = in.regs;
  const uint64_t rsp = regs.rsp;
  if (rsp % 8 != 0)
    return make_error("its stack pointer is not 8-byte aligned");
  auto xsave = check_xsave_image(in.xstate);
  if (!xsave)
    return std::move(xsave).take_error();

  const uint64_t record = rsp - UBT_REC_BELOW_RSP;
  const uint64_t xsave_room = (xsave->size + 63) & ~uint64_t{63};
  const uint64_t base =
      align_down(record - in.block.size() - xsave_room - UBT_JOB_SIZE, 64);
  const uint64_t xsave_at = base + UBT_JOB_SIZE;
  const uint64_t block_at = xsave_at + xsave_room;
  static_assert(UBT_JOB_SIZE % 64 == 0);
  static_assert(UBT_REC_BELOW_RSP - UBT_REC_SIZE >= UBT_RED_ZONE);
  static_assert(UBT_REC_RET_POP == UBT_REC_BELOW_RSP - 16);

  BootstrapFrame frame;
  frame.base = base;
  frame.job = base;
  frame.bytes.assign(record + UBT_REC_SIZE - base, 0);
  auto &bytes = frame.bytes;

  store<uint64_t>(bytes, UBT_JOB_REGION, in.region);
  store<uint64_t>(bytes, UBT_JOB_REGION_SIZE, in.region_size);
  store<uint64_t>(bytes, UBT_JOB_BLOCK_SOURCE, block_at);
  store<uint64_t>(bytes, UBT_JOB_BLOCK_SIZE, in.block.size());
  store<uint64_t>(bytes, UBT_JOB_XSTATE, xsave_at);
  store<uint64_t>(bytes, UBT_JOB_RFBM, xsave->restore_mask);
  store<uint64_t>(bytes, UBT_JOB_MASK_ALL, in.mask_all);
  store<uint64_t>(bytes, UBT_JOB_RECORD, record);
  store<int64_t>(bytes, UBT_JOB_RESTART_CODE,
                 in.call.kind == InterruptedCall::Kind::None ? 0
                                                             : in.call.code);
  store<uint64_t>(bytes, UBT_JOB_INTERRUPTED_RIP, regs.rip);
  store<uint64_t>(bytes, UBT_JOB_COOKIE, in.cookie);
  std::memcpy(bytes.data() + (xsave_at - base), in.xstate.data(), xsave->size);
  std::memcpy(bytes.data() + (block_at - base), in.block.data(),
              in.block.size());

  const size_t r = record - base;
  store<uint64_t>(bytes, r + UBT_REC_EFLAGS,
                  regs.eflags & ~(kTrapFlag | kResumeFlag));
  store<uint64_t>(bytes, r + UBT_REC_RIP, in.call.resume_rip);
  store<uint64_t>(bytes, r + UBT_REC_RAX, in.call.resume_rax);
  const std::pair<size_t, unsigned long long> saved[] = {
      {UBT_REC_R15, regs.r15}, {UBT_REC_R14, regs.r14}, {UBT_REC_R13, regs.r13},
      {UBT_REC_R12, regs.r12}, {UBT_REC_RBP, regs.rbp}, {UBT_REC_RBX, regs.rbx},
      {UBT_REC_R11, regs.r11}, {UBT_REC_R10, regs.r10}, {UBT_REC_R9, regs.r9},
      {UBT_REC_R8, regs.r8},   {UBT_REC_RCX, regs.rcx}, {UBT_REC_RDX, regs.rdx},
      {UBT_REC_RSI, regs.rsi}, {UBT_REC_RDI, regs.rdi}};
  for (auto [offset, value] : saved)
    store<uint64_t>(bytes, r + offset, value);

  frame.entry = regs;
  frame.entry.rip = in.stub;
  frame.entry.rsp = base;
  frame.entry.rbx = base;
  frame.entry.orig_rax = ~0ULL; // nothing for the kernel to restart
  frame.entry.eflags &= ~(kTrapFlag | kDirectionFlag | kAlignmentCheck);

  frame.entry_at_syscall = frame.entry;
  user_regs_struct &call = frame.entry_at_syscall;
  call.rip = in.stub_masked;
  call.orig_rax = SYS_rt_sigprocmask;
  call.rdi = kSigSetmask;
  call.rsi = base + UBT_JOB_MASK_ALL;
  call.rdx = base + UBT_JOB_SAVED_MASK;
  call.r10 = 8;
  return frame;
}

} // namespace ubtrace::runtime::inject
