// Reading fat binaries: one container (header + entries), or several back to
// back as a host binary's .nv_fatbin section holds them. Everything returned
// is a view into the caller's bytes; nothing is copied or decompressed here
// (fatbin_decompress.h does that on demand).
#pragma once

#include "runtime/gpu/bytes.h"
#include "runtime/result.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::gpu {

enum class EntryKind : uint8_t {
  Ptx,   // PTX text, JIT-compiled by the driver
  Cubin, // an ELF cubin (SASS) for one SM architecture
  Other, // a kind this reader does not know (raw_kind says which)
};

enum class Compression : uint8_t {
  None,
  Lz4,  // a raw LZ4 block (CUDA 11/12, `-compress-mode=speed`)
  Zstd, // a zstd frame (CUDA 12.8+/13 default)
};

struct FatbinEntry {
  EntryKind kind = EntryKind::Other;
  uint16_t raw_kind = 0;
  uint32_t sm_arch = 0;       // 90 for sm_90 / compute_90
  uint16_t version_major = 0; // PTX ISA version for PTX, ABI for cubins
  uint16_t version_minor = 0;
  uint64_t flags = 0; // entry_flag bits
  Compression compression = Compression::None;
  std::string_view name;    // often empty
  std::string_view options; // ptxas options recorded with a PTX entry
  size_t offset = 0;        // of the entry header from the container start
  Bytes header;             // the whole entry header (name, options too)
  Bytes stored;             // the stored bytes (compressed or not)
  uint64_t uncompressed_size = 0; // size of the contents once decompressed

  bool is_compressed() const { return compression != Compression::None; }
};

struct Fatbin {
  Bytes bytes; // the whole container, header included
  std::vector<FatbinEntry> entries;
};

// Size of the container that starts at `data` (header + entries), read from
// its header; an error if `data` does not start with a fatbin header.
Result<size_t> fatbin_container_size(Bytes data);

// Parses the container at the start of `data`; `data` may run past its end.
Result<Fatbin> parse_fatbin(Bytes data);

// Parses every container in a region that holds several back to back (an
// ELF .nv_fatbin section), allowing zero padding between them.
Result<std::vector<Fatbin>> parse_fatbin_sequence(Bytes data);

std::string_view entry_kind_name(EntryKind kind);
std::string_view compression_name(Compression compression);

} // namespace ubtrace::runtime::gpu
