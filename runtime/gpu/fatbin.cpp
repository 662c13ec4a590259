#include "runtime/gpu/fatbin.h"

#include "runtime/gpu/fatbin_format.h"

#include <string>

namespace ubtrace::runtime::gpu {
namespace {

std::string hex(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + out;
}

EntryKind kind_of(uint16_t raw) {
  if (raw == kEntryKindPtx)
    return EntryKind::Ptx;
  if (raw == kEntryKindElf)
    return EntryKind::Cubin;
  return EntryKind::Other;
}

Result<Compression> compression_of(uint64_t flags) {
  bool lz4 = flags & entry_flag::kCompressedLz4;
  bool zstd = flags & entry_flag::kCompressedZstd;
  if (lz4 && zstd)
    return make_error("fatbin entry flags " + hex(flags) +
                      " claim both LZ4 and zstd compression");
  if (lz4)
    return Compression::Lz4;
  if (zstd)
    return Compression::Zstd;
  return Compression::None;
}

// A string stored in the entry header: `offset` from the header start,
// `size` bytes; trailing NULs are not part of it.
Result<std::string_view> header_string(Bytes header, uint32_t offset,
                                       uint32_t size, const char *what) {
  if (offset == 0 && size == 0)
    return std::string_view();
  if (offset > header.size() || header.size() - offset < size)
    return make_error(std::string("fatbin entry ") + what +
                      " runs past its header");
  std::string_view text(reinterpret_cast<const char *>(header.data()) + offset,
                        size);
  while (!text.empty() && text.back() == '\0')
    text.remove_suffix(1);
  return text;
}

Result<std::string_view> read_options(Bytes header) {
  uint32_t descriptor =
      load_le<uint32_t>(header.data() + entry_field::kOptionsOffset);
  if (descriptor == 0)
    return std::string_view();
  uint32_t text_offset = 0, text_size = 0;
  if (!read_le(header, descriptor, text_offset) ||
      !read_le(header, descriptor + 4, text_size))
    return make_error("fatbin entry options descriptor runs past its header");
  if (text_size == 0)
    return std::string_view();
  return header_string(header, text_offset, text_size, "options");
}

Result<FatbinEntry> parse_entry(Bytes body, size_t at, size_t container_at) {
  if (body.size() - at < kFatbinEntryFixedSize)
    return make_error("fatbin entry header at " + hex(container_at + at) +
                      " is truncated");
  const uint8_t *h = body.data() + at;
  FatbinEntry entry;
  entry.raw_kind = load_le<uint16_t>(h + entry_field::kKind);
  entry.kind = kind_of(entry.raw_kind);
  uint32_t header_size = load_le<uint32_t>(h + entry_field::kHeaderSize);
  uint64_t payload_size = load_le<uint64_t>(h + entry_field::kPayloadSize);
  if (header_size < kFatbinEntryFixedSize || header_size > body.size() - at)
    return make_error("fatbin entry at " + hex(container_at + at) +
                      " has a bad header size " + std::to_string(header_size));
  if (payload_size > body.size() - at - header_size)
    return make_error("fatbin entry at " + hex(container_at + at) +
                      " has a payload of " + std::to_string(payload_size) +
                      " bytes that runs past its container");
  entry.header = body.subspan(at, header_size);
  entry.sm_arch = load_le<uint32_t>(h + entry_field::kArch);
  entry.version_major = load_le<uint16_t>(h + entry_field::kMajorVersion);
  entry.version_minor = load_le<uint16_t>(h + entry_field::kMinorVersion);
  entry.flags = load_le<uint64_t>(h + entry_field::kFlags);
  auto compression = compression_of(entry.flags);
  if (!compression)
    return std::move(compression).take_error();
  entry.compression = *compression;

  uint32_t compressed_size =
      load_le<uint32_t>(h + entry_field::kCompressedSize);
  Bytes payload = body.subspan(at + header_size, payload_size);
  if (entry.is_compressed()) {
    if (compressed_size > payload_size)
      return make_error("fatbin entry at " + hex(container_at + at) + " says " +
                        std::to_string(compressed_size) +
                        " compressed bytes in a payload of " +
                        std::to_string(payload_size));
    entry.stored = payload.first(compressed_size);
    entry.uncompressed_size =
        load_le<uint64_t>(h + entry_field::kUncompressedSize);
  } else {
    entry.stored = payload;
    entry.uncompressed_size = payload_size;
  }

  auto name = header_string(
      entry.header, load_le<uint32_t>(h + entry_field::kNameOffset),
      load_le<uint32_t>(h + entry_field::kNameSize), "name");
  if (!name)
    return std::move(name).take_error();
  entry.name = *name;
  auto options = read_options(entry.header);
  if (!options)
    return std::move(options).take_error();
  entry.options = *options;
  entry.offset = kFatbinHeaderSize + at;
  return entry;
}

} // namespace

Result<size_t> fatbin_container_size(Bytes data) {
  uint32_t magic = 0;
  uint16_t header_size = 0;
  uint64_t body_size = 0;
  if (!read_le(data, 0, magic) || !read_le(data, 6, header_size) ||
      !read_le(data, 8, body_size))
    return make_error("too short for a fatbin header");
  if (magic != kFatbinMagic)
    return make_error("no fatbin magic (found " + hex(magic) + ", want " +
                      hex(kFatbinMagic) + ")");
  if (header_size != kFatbinHeaderSize)
    return make_error("unexpected fatbin header size " +
                      std::to_string(header_size));
  if (body_size > (uint64_t{1} << 40))
    return make_error("implausible fatbin size " + std::to_string(body_size));
  return static_cast<size_t>(header_size + body_size);
}

Result<Fatbin> parse_fatbin(Bytes data) {
  auto size = fatbin_container_size(data);
  if (!size)
    return std::move(size).take_error();
  if (*size > data.size())
    return make_error("fatbin of " + std::to_string(*size) +
                      " bytes is truncated to " + std::to_string(data.size()));
  Fatbin fatbin;
  fatbin.bytes = data.first(*size);
  Bytes body = fatbin.bytes.subspan(kFatbinHeaderSize);
  size_t at = 0;
  while (at < body.size()) {
    auto entry = parse_entry(body, at, kFatbinHeaderSize);
    if (!entry)
      return std::move(entry).take_error();
    at += entry->header.size() +
          load_le<uint64_t>(entry->header.data() + entry_field::kPayloadSize);
    fatbin.entries.push_back(*entry);
  }
  return fatbin;
}

Result<std::vector<Fatbin>> parse_fatbin_sequence(Bytes data) {
  std::vector<Fatbin> out;
  size_t at = 0;
  while (at < data.size()) {
    uint32_t magic = 0;
    if (!read_le(data, at, magic))
      break; // trailing bytes too short for a header: padding
    if (magic != kFatbinMagic) {
      // Anything between containers is zero padding up to an alignment.
      if (magic != 0)
        return make_error("unexpected bytes at offset " + hex(at) +
                          " between fatbins");
      at += 4;
      continue;
    }
    auto fatbin = parse_fatbin(data.subspan(at));
    if (!fatbin)
      return make_error("fatbin at offset " + hex(at) + ": " + fatbin.error());
    at += fatbin->bytes.size();
    out.push_back(std::move(*fatbin));
  }
  return out;
}

std::string_view entry_kind_name(EntryKind kind) {
  switch (kind) {
  case EntryKind::Ptx:
    return "ptx";
  case EntryKind::Cubin:
    return "elf";
  case EntryKind::Other:
    return "other";
  }
  return "?";
}

std::string_view compression_name(Compression compression) {
  switch (compression) {
  case Compression::None:
    return "none";
  case Compression::Lz4:
    return "lz4";
  case Compression::Zstd:
    return "zstd";
  }
  return "?";
}

} // namespace ubtrace::runtime::gpu
