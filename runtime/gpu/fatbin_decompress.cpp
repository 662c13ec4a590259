#include "runtime/gpu/fatbin_decompress.h"

#include <climits>
#include <lz4.h>
#include <zstd.h>

namespace ubtrace::runtime::gpu {
namespace {

// Entries are at most a few hundred MiB; refuse sizes that would make us
// allocate absurd buffers from a corrupt header.
constexpr uint64_t kMaxEntrySize = uint64_t{1} << 32;

Result<std::vector<uint8_t>> decompress_zstd(Bytes stored, uint64_t size) {
  unsigned long long framed =
      ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (framed == ZSTD_CONTENTSIZE_ERROR)
    return make_error("zstd: not a zstd frame");
  if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != size)
    return make_error("zstd: frame holds " + std::to_string(framed) +
                      " bytes, the entry says " + std::to_string(size));
  std::vector<uint8_t> out(size);
  size_t got =
      ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(got))
    return make_error(std::string("zstd: ") + ZSTD_getErrorName(got));
  if (got != size)
    return make_error("zstd: decompressed " + std::to_string(got) +
                      " bytes, want " + std::to_string(size));
  return out;
}

Result<std::vector<uint8_t>> decompress_lz4(Bytes stored, uint64_t size) {
  if (stored.size() > INT_MAX || size > INT_MAX)
    return make_error("lz4: entry too large for one block");
  std::vector<uint8_t> out(size);
  int got = LZ4_decompress_safe(reinterpret_cast<const char *>(stored.data()),
                                reinterpret_cast<char *>(out.data()),
                                static_cast<int>(stored.size()),
                                static_cast<int>(out.size()));
  if (got < 0)
    return make_error("lz4: corrupt block");
  if (static_cast<uint64_t>(got) != size)
    return make_error("lz4: decompressed " + std::to_string(got) +
                      " bytes, want " + std::to_string(size));
  return out;
}

} // namespace

Result<std::vector<uint8_t>> decompress(Compression compression, Bytes stored,
                                        uint64_t uncompressed_size) {
  if (uncompressed_size > kMaxEntrySize)
    return make_error("implausible uncompressed size " +
                      std::to_string(uncompressed_size));
  switch (compression) {
  case Compression::None:
    return std::vector<uint8_t>(stored.begin(), stored.end());
  case Compression::Lz4:
    return decompress_lz4(stored, uncompressed_size);
  case Compression::Zstd:
    return decompress_zstd(stored, uncompressed_size);
  }
  return make_error("unknown compression");
}

Result<std::vector<uint8_t>> entry_contents(const FatbinEntry &entry) {
  return decompress(entry.compression, entry.stored, entry.uncompressed_size);
}

Result<std::string> entry_ptx(const FatbinEntry &entry) {
  if (entry.kind != EntryKind::Ptx)
    return make_error("fatbin entry is " +
                      std::string(entry_kind_name(entry.kind)) + ", not ptx");
  auto contents = entry_contents(entry);
  if (!contents)
    return std::move(contents).take_error();
  std::string text(contents->begin(), contents->end());
  size_t nul = text.find('\0');
  if (nul != std::string::npos)
    text.resize(nul);
  return text;
}

} // namespace ubtrace::runtime::gpu
