// The on-disk layout of NVIDIA fat binaries, as nvcc 12/13 and the fatbinary
// tool write them (worked out from their output; all fields little-endian).
//
//   wrapper (.nvFatBinSegment, what __cudaRegisterFatBinary receives):
//     u32 magic 0x466243b1, u32 version (1 = module, 2 = device-linked),
//     u64 address of the fatbin, u64 file name / prelinked fatbins (unused)
//   fatbin header (.nv_fatbin), 16 bytes:
//     u32 magic 0xba55ed50, u16 version 1, u16 header size 16,
//     u64 size of the entries that follow
//   entry: a header of `header size` bytes, then `payload size` bytes
//     0  u16 kind (1 PTX, 2 ELF cubin)     2  u16 unknown, 0x0101
//     4  u32 header size (64 + name + options blocks)
//     8  u64 payload size (stored bytes rounded up to 8)
//     16 u32 compressed size (0 when stored uncompressed)
//     20 u32 offset of the options descriptor in the header (0: none)
//     24 u16 minor version, 26 u16 major version (PTX ISA, or cubin ABI)
//     28 u32 SM architecture (90 for sm_90 / compute_90)
//     32 u32 offset of the name in the header, 36 u32 name length
//     40 u64 flags (see EntryFlag)
//     48 u64 unknown, zero
//     56 u64 uncompressed size (0 when stored uncompressed)
//   name block: the name, NUL, zero padding to 8
//   options descriptor: u32 offset of the options text in the header,
//     u32 its length, then the text, NUL, zero padding to 8
//
// Compression: nvcc 13's default (and `-compress-mode=balance`) stores PTX
// as a zstd frame and cubins plain; `size` and `-Xfatbin=-compress-all`
// compress cubins too (zstd); `speed` stores PTX as a raw LZ4 block (the
// format of CUDA 11/12); `none` / `--no-compress` stores everything plain.
// Stored PTX is NUL-terminated (the NUL counts in the uncompressed size).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::gpu {

inline constexpr uint32_t kFatbinWrapperMagic = 0x466243B1;
inline constexpr uint32_t kFatbinMagic = 0xBA55ED50;
inline constexpr uint16_t kFatbinVersion = 1;
inline constexpr size_t kFatbinHeaderSize = 16;
inline constexpr size_t kFatbinEntryFixedSize = 64;

// The wrapper struct exactly as the CUDA runtime reads it (64-bit hosts).
struct FatbinWrapper {
  int32_t magic;
  int32_t version;
  const void *data;
  void *filename_or_fatbins;
};
static_assert(sizeof(FatbinWrapper) == 24);
inline constexpr size_t kFatbinWrapperSize = sizeof(FatbinWrapper);
inline constexpr int32_t kFatbinWrapperVersionModule = 1;
inline constexpr int32_t kFatbinWrapperVersionLinked = 2;

// Offsets of the fields of an entry header.
namespace entry_field {
inline constexpr size_t kKind = 0;
inline constexpr size_t kUnknown2 = 2;
inline constexpr size_t kHeaderSize = 4;
inline constexpr size_t kPayloadSize = 8;
inline constexpr size_t kCompressedSize = 16;
inline constexpr size_t kOptionsOffset = 20;
inline constexpr size_t kMinorVersion = 24;
inline constexpr size_t kMajorVersion = 26;
inline constexpr size_t kArch = 28;
inline constexpr size_t kNameOffset = 32;
inline constexpr size_t kNameSize = 36;
inline constexpr size_t kFlags = 40;
inline constexpr size_t kUncompressedSize = 56;
} // namespace entry_field

inline constexpr uint16_t kEntryKindPtx = 1;
inline constexpr uint16_t kEntryKindElf = 2;
inline constexpr uint16_t kEntryUnknown2Value = 0x0101;

// Bits of the entry flags.
namespace entry_flag {
inline constexpr uint64_t k64Bit = 0x1;
inline constexpr uint64_t kDebug = 0x2;
inline constexpr uint64_t kLinux = 0x10;
inline constexpr uint64_t kCompressedLz4 = 0x2000;
inline constexpr uint64_t kCompressedZstd = 0x8000;
inline constexpr uint64_t kCompressedAny = kCompressedLz4 | kCompressedZstd;
} // namespace entry_flag

} // namespace ubtrace::runtime::gpu
