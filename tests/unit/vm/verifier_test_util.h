// Shared by the hand-assembled verifier tests: maps and a one-call verify.
#pragma once

#include "runtime/vm/asm.h"
#include "runtime/vm/verifier.h"

#include <string>
#include <vector>

namespace ubtrace::vm::test {

inline MapDef hash_map(uint32_t key_size = 8, uint32_t value_size = 16) {
  MapDef m;
  m.name = "hash";
  m.type = BPF_MAP_TYPE_HASH;
  m.key_size = key_size;
  m.value_size = value_size;
  m.max_entries = 16;
  return m;
}

inline MapDef ringbuf_map() {
  MapDef m;
  m.name = "rb";
  m.type = BPF_MAP_TYPE_RINGBUF;
  m.max_entries = 4096;
  return m;
}

inline MapDef rodata_map(std::string text) {
  MapDef m;
  m.name = ".rodata";
  m.type = BPF_MAP_TYPE_ARRAY;
  m.key_size = 4;
  m.value_size = uint32_t(text.size());
  m.max_entries = 1;
  m.is_global_data = true;
  m.read_only = true;
  m.initial_value.assign(text.begin(), text.end());
  return m;
}

// Maps used when a test does not name its own: 0 = hash (8-byte key,
// 16-byte value), 1 = ringbuf, 2 = .rodata holding "%d\0abc".
inline std::vector<MapDef> default_maps() {
  return {hash_map(), ringbuf_map(), rodata_map(std::string("%d\0abc", 6))};
}

inline Result<VerifiedProgram>
verify_insns(std::vector<Insn> insns, std::vector<MapDef> maps = default_maps(),
             ContextInfo ctx = ContextInfo{64}, VerifierOptions options = {}) {
  Program program{"test", "test", std::move(insns), {}};
  return verify(program, maps, standard_helpers(), ctx, options);
}

// The verifier's message, or "accepted".
inline std::string verdict(std::vector<Insn> insns,
                           std::vector<MapDef> maps = default_maps(),
                           ContextInfo ctx = ContextInfo{64},
                           VerifierOptions options = {}) {
  auto r = verify_insns(std::move(insns), std::move(maps), ctx, options);
  return r ? "accepted" : r.error();
}

} // namespace ubtrace::vm::test
