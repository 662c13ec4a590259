// The names a remote image's undefined symbols have, shared by the CLI
// (which links images) and the in-target agent (which supplies the
// addresses): header only, no LLVM, nothing to link.
//
//   ubt_helper_<id>   helper <id> (BPF_FUNC_*, or ubtrace's own), with the
//                     uniform signature u64 fn(u64 r1, ..., u64 r5)
//   ubt_map_iterate   a map's iteration function (vm::ForEachFn), for
//                     bpf_for_each_map_elem
//   memset, memcpy,   libcalls the code generator may choose for large
//   memmove           stack copies and clears
#pragma once

#include <cstdint>
#include <string>

namespace ubtrace::jit {

inline std::string helper_symbol(int32_t id) {
  return "ubt_helper_" + std::to_string(id);
}

inline constexpr const char *kMapIterateSymbol = "ubt_map_iterate";

inline constexpr const char *kLibcallSymbols[] = {"memset", "memcpy",
                                                  "memmove"};

} // namespace ubtrace::jit
