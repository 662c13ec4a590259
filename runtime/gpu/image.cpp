#include "runtime/gpu/image.h"

#include "runtime/gpu/fatbin.h"

#include <cstring>
#include <elf.h>
#include <limits>
#include <string>

namespace ubtrace::runtime::gpu {
namespace {

constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

// Skips whitespace and comments; true if PTX's first directive follows.
bool looks_like_ptx(const uint8_t *p, size_t limit) {
  size_t i = 0;
  auto at = [&](size_t k) { return i + k < limit ? p[i + k] : uint8_t(0); };
  while (i < limit && i < 4096) {
    uint8_t c = at(0);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && at(1) == '/') {
      while (i < limit && at(0) != '\n' && at(0) != 0)
        ++i;
    } else if (c == '/' && at(1) == '*') {
      i += 2;
      while (i < limit && !(at(0) == '*' && at(1) == '/') && at(0) != 0)
        ++i;
      i += 2;
    } else {
      static const char kVersion[] = ".version";
      for (size_t k = 0; k + 1 < sizeof kVersion; ++k)
        if (at(k) != static_cast<uint8_t>(kVersion[k]))
          return false;
      return true;
    }
  }
  return false;
}

ImageKind classify(const uint8_t *p, size_t limit) {
  if (limit >= 4) {
    uint32_t magic = load_le<uint32_t>(p);
    if (magic == kFatbinWrapperMagic)
      return ImageKind::FatbinWrapper;
    if (magic == kFatbinMagic)
      return ImageKind::Fatbin;
    if (std::memcmp(p, ELFMAG, SELFMAG) == 0)
      return ImageKind::Cubin;
  }
  return looks_like_ptx(p, limit) ? ImageKind::Ptx : ImageKind::Unknown;
}

Result<size_t> need(size_t limit, uint64_t end, const char *what) {
  if (end > limit)
    return make_error(std::string(what) + " runs past the buffer");
  return static_cast<size_t>(end);
}

// The extent of an ELF image: the furthest byte any header describes.
Result<size_t> elf_extent(const uint8_t *p, size_t limit) {
  if (limit < sizeof(Elf64_Ehdr))
    return make_error("ELF header runs past the buffer");
  if (p[EI_CLASS] != ELFCLASS64)
    return make_error("cubin is not ELF64");
  auto h = load_le<Elf64_Ehdr>(p);
  uint64_t end = sizeof(Elf64_Ehdr);
  if (h.e_phnum != 0) {
    end = std::max<uint64_t>(end,
                             h.e_phoff + uint64_t{h.e_phnum} * h.e_phentsize);
    if (end > limit)
      return make_error("ELF program headers run past the buffer");
    for (size_t i = 0; i < h.e_phnum; ++i) {
      auto ph = load_le<Elf64_Phdr>(p + h.e_phoff + i * h.e_phentsize);
      end = std::max<uint64_t>(end, ph.p_offset + ph.p_filesz);
    }
  }
  if (h.e_shnum != 0) {
    uint64_t table_end = h.e_shoff + uint64_t{h.e_shnum} * h.e_shentsize;
    if (table_end > limit || h.e_shentsize < sizeof(Elf64_Shdr))
      return make_error("ELF section headers run past the buffer");
    end = std::max(end, table_end);
    for (size_t i = 0; i < h.e_shnum; ++i) {
      auto sh = load_le<Elf64_Shdr>(p + h.e_shoff + i * h.e_shentsize);
      if (sh.sh_type != SHT_NOBITS)
        end = std::max<uint64_t>(end, sh.sh_offset + sh.sh_size);
    }
  }
  return need(limit, end, "ELF image");
}

Result<ImageView> view(const uint8_t *p, size_t limit) {
  ImageView out;
  out.kind = classify(p, limit);
  switch (out.kind) {
  case ImageKind::FatbinWrapper: {
    if (limit < kFatbinWrapperSize)
      return make_error("fatbin wrapper runs past the buffer");
    out.wrapper = reinterpret_cast<const FatbinWrapper *>(p);
    const auto *data = static_cast<const uint8_t *>(out.wrapper->data);
    if (data == nullptr)
      return make_error("fatbin wrapper has no data pointer");
    // The wrapper's data is elsewhere in the process: trust its header.
    auto size = fatbin_container_size(as_bytes(data, kFatbinHeaderSize));
    if (!size)
      return make_error("fatbin wrapper data: " + size.error());
    out.bytes = as_bytes(data, *size);
    return out;
  }
  case ImageKind::Fatbin: {
    auto size =
        fatbin_container_size(as_bytes(p, std::min(limit, kFatbinHeaderSize)));
    if (!size)
      return std::move(size).take_error();
    auto end = need(limit, *size, "fatbin");
    if (!end)
      return std::move(end).take_error();
    out.bytes = as_bytes(p, *size);
    return out;
  }
  case ImageKind::Cubin: {
    auto size = elf_extent(p, limit);
    if (!size)
      return std::move(size).take_error();
    out.bytes = as_bytes(p, *size);
    return out;
  }
  case ImageKind::Ptx: {
    const void *nul = std::memchr(p, 0, limit);
    if (nul == nullptr && limit == kUnbounded)
      return make_error("PTX text has no terminating NUL");
    size_t size = nul ? static_cast<const uint8_t *>(nul) - p : limit;
    out.bytes = as_bytes(p, size);
    return out;
  }
  case ImageKind::Unknown:
    return make_error("not a fatbin, fatbin wrapper, cubin or PTX image");
  }
  return make_error("unknown image kind");
}

} // namespace

ImageKind classify_image(Bytes prefix) {
  return classify(prefix.data(), prefix.size());
}

Result<ImageView> view_image(const void *image) {
  if (image == nullptr)
    return make_error("null image");
  return view(static_cast<const uint8_t *>(image), kUnbounded);
}

Result<ImageView> view_image(Bytes buffer) {
  if (buffer.empty())
    return make_error("empty image");
  return view(buffer.data(), buffer.size());
}

std::string_view image_kind_name(ImageKind kind) {
  switch (kind) {
  case ImageKind::FatbinWrapper:
    return "fatbin-wrapper";
  case ImageKind::Fatbin:
    return "fatbin";
  case ImageKind::Cubin:
    return "cubin";
  case ImageKind::Ptx:
    return "ptx";
  case ImageKind::Unknown:
    return "unknown";
  }
  return "?";
}

} // namespace ubtrace::runtime::gpu
