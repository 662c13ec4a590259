// The glibc frames a stopped thread is in: unwinding its stack through
// the .eh_frame CFI of glibc's own files (libdw) from its registers, frame
// by frame, for as long as the code is glibc's, up to the first return
// address outside glibc (the program's call into glibc). Debian's libc is
// stripped of .symtab, but its .eh_frame describes every function,
// exported or not, so the call chain of a thread parked in an internal
// wait (__futex_abstimed_wait_common, __lll_lock_wait, ...) can be
// followed out to the exported function the program called.
//
// Only what CFI says is trusted: a rule this does not evaluate (a DWARF
// expression beyond register + offset and the CFA), a frame without CFI,
// a frame in the dynamic loader, memory that cannot be read, or more than
// kMaxGlibcFrames frames, and the chain is incomplete (unknown: the
// caller treats it as unsafe).
#pragma once

#include "runtime/inject/remote_memory.h"
#include "runtime/inject/target_glibc.h"
#include "runtime/result.h"

#include <cstdint>
#include <memory>
#include <sys/user.h>
#include <vector>

namespace ubtrace::runtime::inject {

constexpr int kMaxGlibcFrames = 16;

struct GlibcCallChain {
  // The pc of each glibc frame, innermost first: the stopped rip, then
  // return addresses.
  std::vector<uint64_t> pcs;
  // The first return address outside glibc: the program code that called
  // into glibc at pcs.back().
  uint64_t caller = 0;
};

class GlibcUnwinder {
public:
  explicit GlibcUnwinder(const TargetGlibc &glibc);
  ~GlibcUnwinder();
  GlibcUnwinder(const GlibcUnwinder &) = delete;
  GlibcUnwinder &operator=(const GlibcUnwinder &) = delete;

  // The chain, or why it cannot be known.
  Result<GlibcCallChain> unwind(const user_regs_struct &regs,
                                const RemoteMemory &memory) const;

private:
  struct Object;
  const TargetGlibc &glibc_;
  std::vector<std::unique_ptr<Object>> objects_; // as glibc.objects()
};

} // namespace ubtrace::runtime::inject
