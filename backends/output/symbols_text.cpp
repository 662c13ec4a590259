#include "backends/output/symbols_text.h"

#include "runtime/gpu/gpu_helper_ids.h"

#include <algorithm>
#include <cstdio>

namespace ubtrace::output {
namespace {

enum class StackMode { Bpftrace, Perf, Raw, BuildId };

StackMode stack_mode(uint8_t stored) {
  switch (stored) {
  case 1:
    return StackMode::Perf;
  case 2:
    return StackMode::Raw;
  case 3:
    return StackMode::BuildId;
  default:
    return StackMode::Bpftrace;
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// One frame as bpftrace's stack modes write it (without indentation).
std::string frame_text(const SymbolFrame &f, bool user, bool perf,
                       bool show_offset, bool show_debug_info) {
  std::string s;
  if (f.inlined && !perf)
    s += "[inlined] ";
  s += f.name;
  // Inlined frames have no offset of their own.
  if (show_offset && !f.inlined)
    s += "+" + std::to_string(f.offset);
  if (perf) {
    if (user && !f.module.empty() && !f.inlined)
      s += " (" + f.module + ")";
    else if (f.inlined)
      s += " (inlined)";
    else if (user)
      s += " ([unknown])";
    return s; // perf mode never shows file and line
  }
  if (show_debug_info && !f.file.empty())
    s += "@" + f.file + ":" + std::to_string(f.line);
  return s;
}

std::vector<std::string> frame_texts(uint64_t addr, int64_t pid, bool user,
                                     bool perf, const FormatContext &ctx) {
  std::vector<SymbolFrame> frames;
  if (ctx.symbolizer)
    frames =
        user ? ctx.symbolizer->user(addr, pid) : ctx.symbolizer->kernel(addr);
  std::vector<std::string> texts;
  for (const auto &f : frames)
    texts.push_back(frame_text(f, user, perf, true, ctx.show_debug_info));
  if (texts.empty()) {
    std::string unknown = pointer_text(addr);
    if (perf && user)
      unknown += " ([unknown])";
    texts.push_back(std::move(unknown));
  }
  return texts;
}

// The symbol of a single address: the containing (not inlined) function.
std::string symbol_name(const std::vector<SymbolFrame> &frames, uint64_t addr) {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (!it->inlined)
      return it->name;
  return frames.empty() ? pointer_text(addr) : frames.back().name;
}

std::string build_id_line(uint64_t addr, int64_t pid,
                          const FormatContext &ctx) {
  std::optional<BuildIdFrame> frame;
  if (ctx.symbolizer)
    frame = ctx.symbolizer->build_id(addr, pid);
  if (!frame)
    return hex(addr) + "\n";
  std::string s = build_id_text(frame->build_id);
  char offset[24];
  std::snprintf(offset, sizeof(offset), " 0x%02llx",
                static_cast<unsigned long long>(frame->offset));
  return s + offset + "\n";
}

} // namespace

std::string build_id_text(const std::vector<uint8_t> &build_id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : build_id) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string pointer_text(uint64_t addr) {
  if (addr == 0)
    return "0";
  return "0x" + hex(addr);
}

std::string usym_text(uint64_t addr, int64_t pid, const FormatContext &ctx) {
  if (pid == runtime::gpu::kGpuFuncPid) {
    // `func` of a GPU probe: addr is the kernel's id.
    if (!ctx.gpu_kernel_names)
      return pointer_text(addr);
    auto it = ctx.gpu_kernel_names->find(addr);
    if (it == ctx.gpu_kernel_names->end() && ctx.refresh_gpu_kernel_names) {
      ctx.refresh_gpu_kernel_names();
      it = ctx.gpu_kernel_names->find(addr);
    }
    return it != ctx.gpu_kernel_names->end() ? it->second : pointer_text(addr);
  }
  if (!ctx.symbolizer)
    return pointer_text(addr);
  return symbol_name(ctx.symbolizer->user(addr, pid), addr);
}

std::string ksym_text(uint64_t addr, const FormatContext &ctx) {
  if (!ctx.symbolizer)
    return pointer_text(addr);
  return symbol_name(ctx.symbolizer->kernel(addr), addr);
}

StackAddresses stack_addresses(const runtime::ValueType &type, Bytes bytes,
                               const FormatContext &ctx) {
  const bool user = type.kind == runtime::ValueType::Kind::UStack;
  const uint64_t limit = type.stack_limit;
  const uint64_t nr = std::min(load_u64(bytes, 0), limit);
  StackAddresses out;
  // An optional u64 after the frames records the process of a user stack.
  const size_t pid_offset = 8 + 8 * limit;
  out.pid = ctx.default_pid;
  if (user && type.size >= pid_offset + 8)
    out.pid = load_i64(bytes, pid_offset);
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t addr = load_u64(bytes, 8 + 8 * i);
    if (addr == UINT64_MAX) {
      out.failed = true;
      break;
    }
    out.addresses.push_back(addr);
  }
  return out;
}

std::string stack_text(const runtime::ValueType &type,
                       const StackAddresses &stack, const FormatContext &ctx) {
  const bool user = type.kind == runtime::ValueType::Kind::UStack;
  const StackMode mode = stack_mode(type.stack_mode);
  const int64_t pid = stack.pid;

  const std::string indent(8, ' ');
  std::string out = "\n";
  for (uint64_t addr : stack.addresses) {
    switch (mode) {
    case StackMode::Raw:
      out += hex(addr) + "\n";
      break;
    case StackMode::BuildId:
      out += build_id_line(addr, pid, ctx);
      break;
    case StackMode::Bpftrace:
      for (const auto &sym : frame_texts(addr, pid, user, false, ctx))
        out += indent + sym + "\n";
      break;
    case StackMode::Perf:
      for (const auto &sym : frame_texts(addr, pid, user, true, ctx))
        out += "\t" + hex(addr) + " " + sym + "\n";
      break;
    }
  }
  if (stack.failed)
    out += indent + "<unwind failure>\n";
  return out;
}

} // namespace ubtrace::output
