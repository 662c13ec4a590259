// usym(), ksym(), ustack and kstack as bpftrace prints them, given the
// caller's Symbolizer.
#pragma once

#include "backends/output/bytes.h"
#include "backends/output/context.h"
#include "runtime/bundle.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::output {

// How bpftrace prints a raw address through a `void *`: "0x7f12", and "0"
// for null.
std::string pointer_text(uint64_t addr);

// An ELF build id in lower-case hex, as build_id stacks print it.
std::string build_id_text(const std::vector<uint8_t> &build_id);

// usym()/func: the function's name, or the address in hex when unknown.
// func of a GPU probe (pid runtime::gpu::kGpuFuncPid): the kernel's name
// from ctx.gpu_kernel_names, or its id in hex.
std::string usym_text(uint64_t addr, int64_t pid, const FormatContext &ctx);
// ksym(): the same for kernel addresses.
std::string ksym_text(uint64_t addr, const FormatContext &ctx);

// A stack value's addresses, innermost first, up to an unwind failure, and
// the process of a user stack (ctx.default_pid when it records none).
struct StackAddresses {
  std::vector<uint64_t> addresses;
  int64_t pid = -1;
  bool failed = false; // the unwinder stopped short: "<unwind failure>"
};
StackAddresses stack_addresses(const runtime::ValueType &type, Bytes bytes,
                               const FormatContext &ctx);

// A stack (UStack or KStack type, its stack_addresses()): a leading
// newline, then one line per frame in the type's stack mode.
std::string stack_text(const runtime::ValueType &type,
                       const StackAddresses &stack, const FormatContext &ctx);
// The same from the stored bytes.
inline std::string stack_text(const runtime::ValueType &type, Bytes bytes,
                              const FormatContext &ctx) {
  return stack_text(type, stack_addresses(type, bytes, ctx), ctx);
}

} // namespace ubtrace::output
