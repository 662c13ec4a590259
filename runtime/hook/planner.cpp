#include "runtime/hook/planner.h"

#include <cstdio>
#include <sys/mman.h>

namespace ubtrace::runtime::hook {
namespace {

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Why `in` cannot be displaced alone to run out of line (trap path), or "".
std::string single_blocker(const DecodedInsn &in, bool shadow_stack) {
  switch (in.kind) {
  case InsnKind::Int3:
    return "the address holds an int3 (a breakpoint of another tool?)";
  case InsnKind::Unsupported:
    return std::string("'") + in.mnemonic + "' cannot run out of line";
  case InsnKind::CallIndirect:
    if (in.uses_rsp)
      return std::string("'") + in.mnemonic +
             "' through rsp cannot run out "
             "of line";
    [[fallthrough]];
  case InsnKind::CallRel:
    if (shadow_stack)
      return "a call cannot be emulated under a CET shadow stack";
    return "";
  case InsnKind::Plain:
  case InsnKind::RipMemory:
  case InsnKind::JumpRel:
  case InsnKind::CondJumpRel:
  case InsnKind::JumpIndirect:
  case InsnKind::Return:
  case InsnKind::Endbr64:
  case InsnKind::Stop:
    return "";
  }
  return "";
}

// Scans the function for relative branches landing strictly inside
// (patch_start, patch_end): after patching, such a branch would land in the
// middle of the jump. Returns the reason, or "".
std::string branch_into_patch(FunctionBounds f, uint64_t patch_start,
                              uint64_t patch_end, const MemoryRegion &region) {
  if (f.start < region.start)
    return ""; // spans mappings: not scanned
  uint64_t readable_end = region.end;
  uint64_t end = f.start + f.size;
  if (end > readable_end)
    end = readable_end;
  uint64_t pc = f.start;
  while (pc < end) {
    Result<DecodedInsn> in =
        decode_insn(reinterpret_cast<const uint8_t *>(pc), end - pc, pc);
    if (!in)
      return ""; // data or padding: what follows cannot be judged
    switch (in->kind) {
    case InsnKind::JumpRel:
    case InsnKind::CondJumpRel:
    case InsnKind::CallRel:
      if (in->branch_target > patch_start && in->branch_target < patch_end)
        return "the branch at " + hex(pc) + " lands at " +
               hex(in->branch_target) +
               ", inside the bytes a jump would "
               "cover";
      break;
    case InsnKind::Plain:
    case InsnKind::RipMemory:
    case InsnKind::CallIndirect:
    case InsnKind::JumpIndirect:
    case InsnKind::Return:
    case InsnKind::Endbr64:
    case InsnKind::Int3:
    case InsnKind::Stop:
    case InsnKind::Unsupported:
      break;
    }
    pc += in->length;
  }
  return "";
}

} // namespace

Result<PatchPlan> plan_as_trap(const PatchPlan &jump_plan, std::string reason,
                               bool shadow_stack) {
  PatchPlan plan;
  plan.mode = PatchMode::Trap;
  plan.address = jump_plan.address;
  plan.patch_start = jump_plan.patch_start;
  plan.insn_count = 1;
  plan.insns[0] = jump_plan.insns[0];
  plan.displaced_bytes = plan.insns[0].length;
  plan.trap_reason = std::move(reason);
  plan.at_function_entry = jump_plan.at_function_entry;
  std::string blocker = single_blocker(plan.insns[0], shadow_stack);
  if (!blocker.empty())
    return make_error("cannot hook " + hex(plan.address) + ": " + blocker);
  return plan;
}

Result<PatchPlan> plan_patch(uint64_t address, FunctionBounds function,
                             const MemoryMap &map, bool shadow_stack,
                             uint64_t cover_to) {
  const MemoryRegion *region = map.find(address);
  if (!region)
    return make_error("cannot hook " + hex(address) + ": not mapped");
  if (!(region->prot & PROT_EXEC))
    return make_error("cannot hook " + hex(address) +
                      ": not in an executable mapping");
  if (!(region->prot & PROT_READ))
    return make_error("cannot hook " + hex(address) +
                      ": its code is not readable (execute-only mapping)");
  // Code beyond the region (or the function) is not ours to read or patch.
  uint64_t limit = region->end;
  bool bounded = function.size != 0;
  if (bounded) {
    if (function.start == 0)
      function.start = address;
    if (address < function.start || address >= function.start + function.size)
      return make_error("cannot hook " + hex(address) +
                        ": outside the function bounds given");
    if (function.start + function.size < limit)
      limit = function.start + function.size;
  }

  auto code_at = [](uint64_t pc) {
    return reinterpret_cast<const uint8_t *>(pc);
  };
  PatchPlan plan;
  plan.address = address;
  plan.patch_start = address;
  plan.at_function_entry = bounded && function.start == address;
  Result<DecodedInsn> first =
      decode_insn(code_at(address), limit - address, address);
  if (!first)
    return make_error("cannot hook " + hex(address) + ": " + first.error());
  if (first->kind == InsnKind::Endbr64) {
    plan.patch_start = address + first->length;
    if (plan.patch_start >= limit)
      return make_error("cannot hook " + hex(address) +
                        ": nothing follows its endbr64");
  }

  // Decode what a 5-byte jump would cover; note the first reason it cannot.
  std::string no_jump;
  bool too_short = bounded && limit - plan.patch_start < kJumpSize;
  uint64_t cover_end = plan.patch_start + kJumpSize;
  if (cover_to > cover_end)
    cover_end = cover_to;
  uint64_t pc = plan.patch_start;
  while (pc < cover_end) {
    if (plan.insn_count == kMaxDisplaced) {
      no_jump = "too many instructions to cover";
      break;
    }
    if (pc >= limit) {
      no_jump = bounded ? "the function is too short for a 5-byte jump"
                        : "the code ends before 5 bytes";
      break;
    }
    Result<DecodedInsn> in = decode_insn(code_at(pc), limit - pc, pc);
    if (!in) {
      if (plan.insn_count == 0)
        return make_error("cannot hook " + hex(address) + ": " + in.error());
      no_jump = in.error();
      break;
    }
    plan.insns[plan.insn_count++] = *in;
    pc += in->length;
    if (too_short) {
      no_jump = "the function is too short for a 5-byte jump";
      break;
    }
    bool covered = pc >= cover_end;
    if (in->kind == InsnKind::Endbr64 && plan.insn_count > 1) {
      no_jump = "an endbr64 (an indirect branch target) lies inside the bytes "
                "a jump would cover";
      break;
    }
    if (in->kind == InsnKind::Int3 || in->kind == InsnKind::Unsupported) {
      no_jump = single_blocker(*in, shadow_stack);
      break;
    }
    if ((in->kind == InsnKind::CallRel || in->kind == InsnKind::CallIndirect) &&
        !covered) {
      no_jump = "the call at " + hex(in->address) +
                " would return into the bytes a jump covers";
      break;
    }
    if (ends_flow(in->kind) && !covered) {
      no_jump = std::string("'") + in->mnemonic + "' at " + hex(in->address) +
                " ends the code before 5 bytes";
      break;
    }
    std::string blocker = single_blocker(*in, shadow_stack);
    if (!blocker.empty()) {
      no_jump = blocker;
      break;
    }
  }
  if (plan.insn_count == 0)
    return make_error("cannot hook " + hex(address) + ": no instruction");
  if (no_jump.empty()) {
    plan.displaced_bytes = static_cast<uint32_t>(pc - plan.patch_start);
    if (bounded)
      no_jump = branch_into_patch(function, plan.patch_start, plan.patch_end(),
                                  *region);
  }
  if (no_jump.empty())
    return plan;
  return plan_as_trap(plan, no_jump, shadow_stack);
}

} // namespace ubtrace::runtime::hook
