// Writing fat binaries, uncompressed, in the layout nvcc's fatbinary tool
// uses (fatbin_format.h), so the driver and nvJitLink take them as theirs.
// The agent uses it to hand the driver a fatbin that holds only the rewritten
// PTX: with no SASS left the driver must JIT-compile our PTX.
#pragma once

#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_format.h"

#include <span>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::gpu {

struct FatbinEntrySpec {
  uint16_t raw_kind = kEntryKindPtx;
  uint32_t sm_arch = 0;
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  // Compression bits are ignored: entries are always written uncompressed.
  uint64_t flags = entry_flag::k64Bit | entry_flag::kLinux;
  std::string_view name;
  std::string_view options; // ptxas options for a PTX entry
  // PTX: the text (a terminating NUL is added when missing); cubin: the ELF.
  Bytes contents;
};

std::vector<uint8_t> write_fatbin(std::span<const FatbinEntrySpec> entries);

// A PTX entry that replaces `original` (a PTX entry): same architecture,
// flags (less compression), name and ptxas options, with the PTX ISA version
// the new text declares.
FatbinEntrySpec replacement_ptx_entry(const FatbinEntry &original,
                                      std::string_view ptx,
                                      uint16_t version_major,
                                      uint16_t version_minor);

} // namespace ubtrace::runtime::gpu
