// The bootstrap frame (runtime/inject/bootstrap_frame.h), the stack rule
// (thread_stack.h) and the region's placement (region_placement.h): pure
// functions of a thread's saved state and a process's maps.
#include "runtime/inject/bootstrap_frame.h"
#include "runtime/inject/bootstrap_layout.h"
#include "runtime/inject/region_placement.h"
#include "runtime/inject/thread_stack.h"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <sys/syscall.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr std::array<uint8_t, 2> kSyscall = {0x0f, 0x05};
constexpr std::array<uint8_t, 2> kInt80 = {0xcd, 0x80};

user_regs_struct in_call(long nr, long rax) {
  user_regs_struct regs{};
  regs.orig_rax = static_cast<unsigned long long>(nr);
  regs.rax = static_cast<unsigned long long>(rax);
  regs.rip = 0x7f0000001002;
  regs.rsp = 0x7ffc00010000;
  return regs;
}

TEST(InterruptedCall, RestartsLikeTheKernel) {
  for (long code : {-512L, -513L, -514L}) {
    auto call = interrupted_call(in_call(SYS_read, code), kSyscall);
    ASSERT_TRUE(call.ok()) << call.error();
    EXPECT_EQ(call->kind, InterruptedCall::Kind::Restart);
    EXPECT_EQ(call->code, code);
    EXPECT_EQ(call->resume_rip, 0x7f0000001000u);
    EXPECT_EQ(call->resume_rax, static_cast<uint64_t>(SYS_read));
  }
  auto block = interrupted_call(in_call(SYS_nanosleep, -516), kSyscall);
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->kind, InterruptedCall::Kind::RestartBlock);
  EXPECT_EQ(block->resume_rax, static_cast<uint64_t>(SYS_restart_syscall));
  EXPECT_EQ(block->resume_rip, 0x7f0000001000u);
  // int 0x80 from 64-bit code restarts through the ia32 restart_syscall.
  auto compat = interrupted_call(in_call(162, -516), kInt80);
  ASSERT_TRUE(compat.ok());
  EXPECT_EQ(compat->resume_rax, 0u);
}

TEST(InterruptedCall, FinishedCallsAndPlainCodeAreLeftAlone) {
  for (auto regs :
       {in_call(SYS_read, 5), in_call(SYS_read, -4), in_call(-1, -512)}) {
    EXPECT_FALSE(needs_instruction_bytes(regs));
    auto call = interrupted_call(regs, std::nullopt);
    ASSERT_TRUE(call.ok());
    EXPECT_EQ(call->kind, InterruptedCall::Kind::None);
    EXPECT_EQ(call->resume_rip, regs.rip);
    EXPECT_EQ(call->resume_rax, regs.rax);
  }
}

TEST(InterruptedCall, UnknownInstructionIsRefused) {
  auto regs = in_call(SYS_read, -512);
  EXPECT_TRUE(needs_instruction_bytes(regs));
  EXPECT_FALSE(interrupted_call(regs, std::nullopt).ok());
  auto call = interrupted_call(regs, std::array<uint8_t, 2>{0x90, 0x90});
  ASSERT_FALSE(call.ok());
  EXPECT_NE(call.error().find("instruction"), std::string::npos);
}

// An XSAVE image as ptrace gives it: XCR0 at 464, the header at 512. One
// shorter than `size` is the first `size` bytes of a full one.
std::vector<uint8_t> xsave(uint64_t xcr0, uint64_t present, size_t size = 832) {
  std::vector<uint8_t> image(std::max<size_t>(size, 832), 0);
  uint32_t mxcsr = 0x1f80, mask = 0xffff;
  std::memcpy(image.data() + 24, &mxcsr, 4);
  std::memcpy(image.data() + 28, &mask, 4);
  std::memcpy(image.data() + 464, &xcr0, 8);
  std::memcpy(image.data() + 512, &present, 8);
  image.resize(size);
  return image;
}

TEST(XsaveImage, ChecksWhatXrstorWouldFaultOn) {
  auto ok = check_xsave_image(xsave(7, 3));
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok->size, 832u);
  EXPECT_EQ(ok->features, 7u);
  EXPECT_EQ(ok->restore_mask, 7u);
  EXPECT_FALSE(check_xsave_image(xsave(7, 3, 500)).ok()); // too short
  EXPECT_FALSE(check_xsave_image(xsave(4, 0)).ok());      // no x87/SSE
  EXPECT_FALSE(check_xsave_image(xsave(7, 8)).ok());      // outside XCR0
  auto compacted = xsave(7, 3);
  compacted[520 + 7] = 0x80; // XCOMP_BV bit 63
  EXPECT_FALSE(check_xsave_image(compacted).ok());
  auto mxcsr = xsave(7, 3);
  uint32_t mask = 0xffbf;
  std::memcpy(mxcsr.data() + 28, &mask, 4);
  mxcsr[24] = 0x40; // DAZ without support
  EXPECT_FALSE(check_xsave_image(mxcsr).ok());
}

TEST(XsaveImage, AmxTileDataIsRestoredOnlyWhenInUse) {
  uint64_t xcr0 = 7 | (uint64_t{3} << 17);
  EXPECT_EQ(check_xsave_image(xsave(xcr0, 3, 4096))->restore_mask,
            xcr0 & ~(uint64_t{1} << 18));
  EXPECT_EQ(check_xsave_image(xsave(xcr0, 3 | (uint64_t{1} << 18), 4096))
                ->restore_mask,
            xcr0);
}

uint64_t word(const BootstrapFrame &frame, uint64_t address) {
  uint64_t value;
  std::memcpy(&value, frame.bytes.data() + (address - frame.base), 8);
  return value;
}

TEST(BootstrapFrame, LaysOutTheJobAndTheRestoreRecord) {
  BootstrapInput in;
  in.regs = in_call(SYS_read, -512);
  in.regs.rbx = 0x1111;
  in.regs.rdi = 0x2222;
  in.regs.r15 = 0x3333;
  in.regs.eflags = 0x202 | 0x100 | 0x400 | 0x40000; // IF, TF, DF, AC
  in.xstate = xsave(7, 3);
  in.call = *interrupted_call(in.regs, kSyscall);
  in.stub = 0x7f0000100000;
  in.stub_masked = 0x7f0000100040;
  in.region = 0x100000000000;
  in.region_size = UBT_REGION_SIZE;
  in.block = std::vector<uint8_t>(1000, 0xab);
  in.mask_all = ~uint64_t{0};
  in.cookie = 0x5eed;
  auto frame = build_bootstrap_frame(in);
  ASSERT_TRUE(frame.ok()) << frame.error();
  const uint64_t rsp = in.regs.rsp;
  EXPECT_EQ(frame->base % 64, 0u);
  EXPECT_EQ(frame->job, frame->base);
  // Nothing at or above rsp - 128 (the red zone) is written.
  EXPECT_EQ(frame->base + frame->bytes.size(), rsp - 136);
  const uint64_t record = rsp - UBT_REC_BELOW_RSP;
  EXPECT_EQ(word(*frame, frame->base + UBT_JOB_RECORD), record);
  // The restore record: the restart emulated, the rest as saved, TF off.
  EXPECT_EQ(word(*frame, record + UBT_REC_RIP), in.regs.rip - 2);
  EXPECT_EQ(word(*frame, record + UBT_REC_RAX), uint64_t{SYS_read});
  EXPECT_EQ(word(*frame, record + UBT_REC_RBX), 0x1111u);
  EXPECT_EQ(word(*frame, record + UBT_REC_RDI), 0x2222u);
  EXPECT_EQ(word(*frame, record + UBT_REC_R15), 0x3333u);
  EXPECT_EQ(word(*frame, record + UBT_REC_EFLAGS), 0x202u | 0x400 | 0x40000);
  // The job: the EINTR alternative, the XSAVE image and block inside the
  // frame, below the record.
  EXPECT_EQ(
      static_cast<int64_t>(word(*frame, frame->base + UBT_JOB_RESTART_CODE)),
      -512);
  EXPECT_EQ(word(*frame, frame->base + UBT_JOB_INTERRUPTED_RIP), in.regs.rip);
  uint64_t xstate = word(*frame, frame->base + UBT_JOB_XSTATE);
  uint64_t block = word(*frame, frame->base + UBT_JOB_BLOCK_SOURCE);
  EXPECT_EQ(xstate % 64, 0u);
  EXPECT_GE(xstate, frame->base + UBT_JOB_SIZE);
  EXPECT_GE(block, xstate + in.xstate.size());
  EXPECT_LE(block + in.block.size(), record);
  EXPECT_EQ(word(*frame, frame->base + UBT_JOB_BLOCK_SIZE), 1000u);
  EXPECT_EQ(word(*frame, frame->base + UBT_JOB_COOKIE), 0x5eedu);
  // Entry at a plain stop: the stub, on the job, nothing to restart, DF,
  // TF and AC off (the stub's string copy and libc's code need DF clear).
  EXPECT_EQ(frame->entry.rip, in.stub);
  EXPECT_EQ(frame->entry.rsp, frame->base);
  EXPECT_EQ(frame->entry.rbx, frame->base);
  EXPECT_EQ(frame->entry.orig_rax, ~0ULL);
  EXPECT_EQ(frame->entry.eflags, 0x202u);
  // Entry at the call's entry: the call becomes rt_sigprocmask(SIG_SETMASK,
  // &mask_all, &saved_mask, 8), returning into the stub after its own.
  const user_regs_struct &at = frame->entry_at_syscall;
  EXPECT_EQ(at.rip, in.stub_masked);
  EXPECT_EQ(at.orig_rax, uint64_t{SYS_rt_sigprocmask});
  EXPECT_EQ(at.rdi, 2u);
  EXPECT_EQ(at.rsi, frame->base + UBT_JOB_MASK_ALL);
  EXPECT_EQ(at.rdx, frame->base + UBT_JOB_SAVED_MASK);
  EXPECT_EQ(at.r10, 8u);
  EXPECT_EQ(word(*frame, frame->base + UBT_JOB_MASK_ALL), ~uint64_t{0});
}

TEST(BootstrapFrame, RefusesAMisalignedStack) {
  BootstrapInput in;
  in.regs = in_call(-1, 0);
  in.regs.rsp += 4;
  in.xstate = xsave(7, 3);
  auto frame = build_bootstrap_frame(in);
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.error(), "its stack pointer is not 8-byte aligned");
}

MappedRegion region(uint64_t start, uint64_t end, const char *perms,
                    const std::string &path = "") {
  MappedRegion r;
  r.start = start;
  r.end = end;
  r.readable = perms[0] == 'r';
  r.writable = perms[1] == 'w';
  r.executable = perms[2] == 'x';
  r.path = path;
  return r;
}

TEST(ThreadStack, KnowsTheMainStackAndGlibcThreadStacks) {
  user_regs_struct regs{};
  // The main thread: [stack], room down to its start (it grows below).
  std::vector<MappedRegion> maps = {
      region(0x7ffc00000000, 0x7ffc00021000, "rw-", "[stack]")};
  regs.rsp = 0x7ffc00010000;
  EXPECT_TRUE(check_stack_room(maps, regs, 0x7ffc0000f000).ok());
  EXPECT_FALSE(check_stack_room(maps, regs, 0x7ffbfffff000).ok());
  // A glibc thread: guard below, TCB at the top.
  maps = {region(0x7f0000000000, 0x7f0000001000, "---"),
          region(0x7f0000001000, 0x7f0000801000, "rw-")};
  regs.rsp = 0x7f0000700000;
  regs.fs_base = 0x7f0000800700;
  EXPECT_TRUE(check_stack_room(maps, regs, 0x7f00006ff000).ok());
  auto low = check_stack_room(maps, regs, 0x7f0000002000);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().rfind("has too little stack left", 0), 0u);
}

TEST(ThreadStack, UnknownStacksAreRefused) {
  user_regs_struct regs{};
  regs.rsp = 0x7f0000700000;
  regs.fs_base = 0x7f0000800700;
  // No guard under it (a user stack, or one that merged with neighbours).
  std::vector<MappedRegion> maps = {
      region(0x7f0000001000, 0x7f0000801000, "rw-")};
  auto unguarded = check_stack_room(maps, regs, 0x7f00006ff000);
  ASSERT_FALSE(unguarded.ok());
  EXPECT_NE(unguarded.error().find("no guard page"), std::string::npos);
  // The TCB elsewhere: an alternate signal stack, a coroutine's.
  maps = {region(0x7f0000000000, 0x7f0000001000, "---"),
          region(0x7f0000001000, 0x7f0000801000, "rw-")};
  regs.fs_base = 0x7e0000000000;
  EXPECT_FALSE(check_stack_room(maps, regs, 0x7f00006ff000).ok());
  // In the heap, or in a file mapping.
  maps = {region(0x555500000000, 0x555500800000, "rw-", "[heap]")};
  regs.rsp = 0x555500700000;
  EXPECT_FALSE(check_stack_room(maps, regs, 0x5555006ff000).ok());
  // Not writable.
  maps = {region(0x7ffc00000000, 0x7ffc00021000, "r--", "[stack]")};
  regs.rsp = 0x7ffc00010000;
  EXPECT_FALSE(check_stack_room(maps, regs, 0x7ffc0000f000).ok());
}

TEST(RegionPlacement, PicksAPageInsideTheLargestGapAwayFromItsEnds) {
  std::vector<MappedRegion> maps = {
      region(0x555500000000, 0x555500100000, "r-x", "/bin/x"),
      region(0x7f0000000000, 0x7f0000100000, "r-x", "/lib/libc.so.6"),
      region(0x7ffc00000000, 0x7ffc00021000, "rw-", "[stack]")};
  std::mt19937_64 random(1);
  for (int i = 0; i < 100; ++i) {
    auto at = place_region(maps, UBT_REGION_SIZE, random);
    ASSERT_TRUE(at.ok()) << at.error();
    EXPECT_EQ(*at % 4096, 0u);
    // Below the program, the largest gap here, from 4 GiB up.
    EXPECT_GE(*at, (uint64_t{1} << 32) + (uint64_t{1} << 30));
    EXPECT_LE(*at + UBT_REGION_SIZE, 0x555500000000u - (uint64_t{1} << 30));
  }
}

TEST(RegionPlacement, SaysSoWhenThereIsNoRoom) {
  std::vector<MappedRegion> maps = {region(0x1000, 0x7ff000000000, "rw-")};
  std::mt19937_64 random(1);
  auto at = place_region(maps, UBT_REGION_SIZE, random);
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.error().find("no room"), std::string::npos);
}

} // namespace
} // namespace ubtrace::runtime::inject
