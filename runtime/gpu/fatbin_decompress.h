// Decompressing fatbin entries: zstd frames (CUDA 12.8+/13) and raw LZ4
// blocks (older CUDA, `-compress-mode=speed`).
#pragma once

#include "runtime/gpu/fatbin.h"

#include <string>
#include <vector>

namespace ubtrace::runtime::gpu {

// Decompresses `stored` into exactly `uncompressed_size` bytes.
Result<std::vector<uint8_t>> decompress(Compression compression, Bytes stored,
                                        uint64_t uncompressed_size);

// The entry's contents, decompressed if needed (a copy either way).
Result<std::vector<uint8_t>> entry_contents(const FatbinEntry &entry);

// A PTX entry's text: its contents up to the terminating NUL.
Result<std::string> entry_ptx(const FatbinEntry &entry);

} // namespace ubtrace::runtime::gpu
