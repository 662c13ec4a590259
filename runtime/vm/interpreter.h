// The interpreter: runs a verified program, bound to host maps and helpers,
// against a ctx pointer. Helpers are plain C functions of five u64 arguments
// (the JIT calls the very same functions), so per-run state a helper needs
// (the current probe, ...) is the helper side's business: thread-local.
// bpf_loop and bpf_for_each_map_elem are run by the VM itself, which
// re-enters the interpreter for the callback.
#pragma once

#include "runtime/result.h"
#include "runtime/vm/verifier.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::vm {

using HelperFn = uint64_t (*)(uint64_t r1, uint64_t r2, uint64_t r3,
                              uint64_t r4, uint64_t r5);

// bpf_for_each_map_elem support, provided by the map's owner: call `cb` for
// each element (key and value pointers valid during the call) until it
// returns nonzero; return the number of elements visited.
using ForEachCallback = long (*)(void *map, void *key, void *value,
                                 void *cb_ctx);
using ForEachFn = long (*)(void *map, ForEachCallback cb, void *cb_ctx);

// How one map of the object exists on the host.
struct MapBinding {
  // What a map reference (ld_imm64 BPF_PSEUDO_MAP_FD) loads: an opaque value
  // helpers get back as their map argument, e.g. the map object's address.
  uint64_t handle = 0;
  // Array maps and global data: the first value's address, for direct
  // value access (ld_imm64 BPF_PSEUDO_MAP_VALUE). nullptr if unsupported.
  void *value_base = nullptr;
  // nullptr if the map cannot be iterated.
  ForEachFn for_each = nullptr;
};

// Helper implementations by helper id.
class HelperImpls {
public:
  void set(int32_t id, HelperFn fn);
  HelperFn get(int32_t id) const;
  const std::vector<HelperFn> &by_id() const { return by_id_; }

private:
  std::vector<HelperFn> by_id_;
};

// A verified program with every map reference and helper resolved.
struct BoundProgram {
  std::string name;
  // Map and callback ld_imm64 rewritten to plain 64-bit constants (a
  // callback loads its entry pc).
  std::vector<Insn> insns;
  std::vector<HelperFn> helpers;     // by helper id
  std::vector<MapBinding> maps;      // by map index
  std::vector<int32_t> for_each_map; // per pc: map index, else -1
  // VerifiedProgram's: the ctx bytes some path may read, [lo, hi).
  uint32_t ctx_read_lo = UINT32_MAX, ctx_read_hi = 0;
  bool reads_ctx(uint32_t lo, uint32_t hi) const {
    return ctx_read_lo < ctx_read_hi && ctx_read_lo < hi && lo < ctx_read_hi;
  }
  // VerifiedProgram's: the helpers some path may call, sorted, once each.
  std::vector<int32_t> called_helpers;
  bool calls_helper(int32_t id) const {
    return std::binary_search(called_helpers.begin(), called_helpers.end(), id);
  }
};

Result<BoundProgram> bind_program(const VerifiedProgram &program,
                                  std::span<const MapBinding> maps,
                                  const HelperImpls &helpers);

enum class RunStatus : uint8_t {
  Ok,
  InsnBudgetExceeded, // ran more instructions than RunOptions::max_insns
  MissingHelper,      // a helper without implementation was called
};
const char *describe(RunStatus status);

struct RunOptions {
  // Belt and braces: the verifier proved termination, but bpf_loop may
  // legally run 8M iterations; a run past this stops with an error.
  uint64_t max_insns = uint64_t(1) << 26;
};

struct RunResult {
  RunStatus status = RunStatus::Ok;
  uint64_t r0 = 0;      // the program's return value when Ok
  uint64_t insns = 0;   // instructions executed, callbacks included
  uint32_t stop_pc = 0; // where a failed run stopped
};

RunResult run(const BoundProgram &program, void *ctx,
              const RunOptions &options = {});

} // namespace ubtrace::vm
