#include "runtime/gpu/fatbin_writer.h"

namespace ubtrace::runtime::gpu {
namespace {

// A string block of the entry header: the text, a NUL, zero padding to 8.
size_t string_block_size(std::string_view text) {
  return align_up(text.size() + 1, 8);
}

bool needs_nul(const FatbinEntrySpec &spec) {
  return spec.raw_kind == kEntryKindPtx &&
         (spec.contents.empty() || spec.contents.back() != 0);
}

void append_string_block(std::vector<uint8_t> &out, std::string_view text) {
  size_t at = out.size();
  out.resize(at + string_block_size(text), 0);
  std::copy(text.begin(), text.end(), out.begin() + at);
}

void append_entry(std::vector<uint8_t> &out, const FatbinEntrySpec &spec) {
  // fatbinary writes an options descriptor for every PTX entry, empty or
  // not, and for other kinds only when there are options.
  bool has_options = spec.raw_kind == kEntryKindPtx || !spec.options.empty();
  size_t name_at = kFatbinEntryFixedSize;
  size_t name_block = spec.name.empty() ? 0 : string_block_size(spec.name);
  size_t options_at = name_at + name_block;
  size_t options_block = has_options ? 8 + string_block_size(spec.options) : 0;
  size_t header_size = options_at + options_block;
  size_t content_size = spec.contents.size() + (needs_nul(spec) ? 1 : 0);
  size_t payload_size = align_up(content_size, 8);

  size_t at = out.size();
  out.resize(at + kFatbinEntryFixedSize, 0);
  uint8_t *h = out.data() + at;
  store_le<uint16_t>(h + entry_field::kKind, spec.raw_kind);
  store_le<uint16_t>(h + entry_field::kUnknown2, kEntryUnknown2Value);
  store_le<uint32_t>(h + entry_field::kHeaderSize,
                     static_cast<uint32_t>(header_size));
  store_le<uint64_t>(h + entry_field::kPayloadSize, payload_size);
  store_le<uint32_t>(h + entry_field::kOptionsOffset,
                     has_options ? static_cast<uint32_t>(options_at) : 0);
  store_le<uint16_t>(h + entry_field::kMinorVersion, spec.version_minor);
  store_le<uint16_t>(h + entry_field::kMajorVersion, spec.version_major);
  store_le<uint32_t>(h + entry_field::kArch, spec.sm_arch);
  if (!spec.name.empty()) {
    store_le<uint32_t>(h + entry_field::kNameOffset,
                       static_cast<uint32_t>(name_at));
    store_le<uint32_t>(h + entry_field::kNameSize,
                       static_cast<uint32_t>(spec.name.size()));
  }
  store_le<uint64_t>(h + entry_field::kFlags,
                     spec.flags & ~entry_flag::kCompressedAny);
  if (!spec.name.empty())
    append_string_block(out, spec.name);
  if (has_options) {
    append_le<uint32_t>(out, static_cast<uint32_t>(options_at + 8));
    append_le<uint32_t>(out, static_cast<uint32_t>(spec.options.size()));
    append_string_block(out, spec.options);
  }
  size_t payload_at = out.size();
  out.insert(out.end(), spec.contents.begin(), spec.contents.end());
  out.resize(payload_at + payload_size, 0);
}

} // namespace

std::vector<uint8_t> write_fatbin(std::span<const FatbinEntrySpec> entries) {
  std::vector<uint8_t> out;
  out.resize(kFatbinHeaderSize, 0);
  for (const FatbinEntrySpec &spec : entries)
    append_entry(out, spec);
  store_le<uint32_t>(out.data(), kFatbinMagic);
  store_le<uint16_t>(out.data() + 4, kFatbinVersion);
  store_le<uint16_t>(out.data() + 6, static_cast<uint16_t>(kFatbinHeaderSize));
  store_le<uint64_t>(out.data() + 8, out.size() - kFatbinHeaderSize);
  return out;
}

FatbinEntrySpec replacement_ptx_entry(const FatbinEntry &original,
                                      std::string_view ptx,
                                      uint16_t version_major,
                                      uint16_t version_minor) {
  FatbinEntrySpec spec;
  spec.raw_kind = kEntryKindPtx;
  spec.sm_arch = original.sm_arch;
  spec.version_major = version_major;
  spec.version_minor = version_minor;
  spec.flags = original.flags & ~entry_flag::kCompressedAny;
  spec.name = original.name;
  spec.options = original.options;
  spec.contents = as_bytes(ptx.data(), ptx.size());
  return spec;
}

} // namespace ubtrace::runtime::gpu
