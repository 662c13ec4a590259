// bind_program(): a verified program plus the host's maps and helpers becomes a
// program the interpreter can run with no lookups left.
#include "runtime/vm/interpreter.h"

#include <algorithm>

namespace ubtrace::vm {

void HelperImpls::set(int32_t id, HelperFn fn) {
  if (id < 0)
    return;
  if (size_t(id) >= by_id_.size())
    by_id_.resize(size_t(id) + 1, nullptr);
  by_id_[size_t(id)] = fn;
}

HelperFn HelperImpls::get(int32_t id) const {
  if (id < 0 || size_t(id) >= by_id_.size())
    return nullptr;
  return by_id_[size_t(id)];
}

namespace {

std::string at(uint32_t pc) {
  return "PC " + std::to_string(pc) + ": ";
}

void set_imm64(Insn &lo, Insn &hi, uint64_t value) {
  lo.src = 0;
  lo.imm = int32_t(uint32_t(value));
  hi.imm = int32_t(uint32_t(value >> 32));
}

} // namespace

Result<BoundProgram> bind_program(const VerifiedProgram &program,
                                  std::span<const MapBinding> maps,
                                  const HelperImpls &helpers) {
  BoundProgram out;
  out.name = program.name;
  out.insns = program.insns;
  out.ctx_read_lo = program.ctx_read_lo;
  out.ctx_read_hi = program.ctx_read_hi;
  out.maps.assign(maps.begin(), maps.end());
  out.for_each_map.assign(out.insns.size(), -1);
  for (uint32_t index : program.maps_used)
    if (index >= maps.size())
      return make_error("map " + std::to_string(index) + " has no binding (" +
                        std::to_string(maps.size()) + " bindings given)");
  for (uint32_t pc = 0; pc + 1 < out.insns.size(); ++pc) {
    Insn &lo = out.insns[pc];
    if (!is_ld_imm64(lo))
      continue;
    Insn &hi = out.insns[pc + 1];
    switch (lo.src) {
    case BPF_PSEUDO_MAP_FD:
      set_imm64(lo, hi, maps[lo.imm].handle);
      break;
    case BPF_PSEUDO_MAP_VALUE:
      if (!maps[lo.imm].value_base)
        return make_error(at(pc) + "map " + std::to_string(lo.imm) +
                          " has no direct value address");
      set_imm64(lo, hi,
                reinterpret_cast<uint64_t>(maps[lo.imm].value_base) +
                    uint32_t(hi.imm));
      break;
    case BPF_PSEUDO_FUNC:
      set_imm64(lo, hi, uint64_t(int64_t(pc) + 1 + lo.imm));
      break;
    default:
      break;
    }
    ++pc;
  }
  out.helpers = helpers.by_id();
  for (const HelperCallSite &site : program.helper_calls) {
    out.called_helpers.push_back(site.helper);
    if (site.helper == BPF_FUNC_loop)
      continue;
    if (site.helper == BPF_FUNC_for_each_map_elem) {
      if (site.map < 0 || size_t(site.map) >= maps.size() ||
          !maps[site.map].for_each)
        return make_error(at(site.pc) + "map " + std::to_string(site.map) +
                          " cannot be iterated (its binding has no "
                          "for_each)");
      out.for_each_map[site.pc] = site.map;
      continue;
    }
    if (!helpers.get(site.helper))
      return make_error(at(site.pc) + "helper " + std::to_string(site.helper) +
                        " has no implementation");
  }
  std::sort(out.called_helpers.begin(), out.called_helpers.end());
  out.called_helpers.erase(
      std::unique(out.called_helpers.begin(), out.called_helpers.end()),
      out.called_helpers.end());
  return out;
}

const char *describe(RunStatus status) {
  switch (status) {
  case RunStatus::Ok:
    return "ok";
  case RunStatus::InsnBudgetExceeded:
    return "instruction budget exceeded";
  case RunStatus::MissingHelper:
    return "helper without implementation called";
  }
  return "?";
}

} // namespace ubtrace::vm
