// What the CUDA driver entry points receive as a module image, and how big
// it is. cuModuleLoadData/Ex, cuModuleLoadFatBinary, cuLibraryLoadData and
// __cudaRegisterFatBinary all take a bare pointer with no size: the image
// is a fatbin wrapper, a fatbin, a cubin (ELF) or NUL-terminated PTX, and
// its extent is known only from its own headers.
#pragma once

#include "runtime/gpu/bytes.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/result.h"

#include <string_view>

namespace ubtrace::runtime::gpu {

enum class ImageKind : uint8_t {
  FatbinWrapper, // __fatBinC_Wrapper_t (what __cudaRegisterFatBinary gets)
  Fatbin,        // a fatbin container (0xba55ed50)
  Cubin,         // an ELF cubin
  Ptx,           // PTX text
  Unknown,
};

struct ImageView {
  ImageKind kind = ImageKind::Unknown;
  // The image's bytes: for a wrapper, the fatbin it points to; for PTX, the
  // text without its NUL.
  Bytes bytes;
  const FatbinWrapper *wrapper = nullptr; // set for FatbinWrapper
};

// The kind of image that starts with `prefix` (which may be the whole
// image or just its first bytes).
ImageKind classify_image(Bytes prefix);

// Views an image the way the driver does: reads its headers to find its
// extent. The pointer must be what a CUDA application passed to the driver;
// nothing past the headers' claims is read.
Result<ImageView> view_image(const void *image);

// The same for an image held in a buffer of known size; claims that run
// past the buffer are errors. A wrapper's data pointer is still followed.
Result<ImageView> view_image(Bytes buffer);

std::string_view image_kind_name(ImageKind kind);

} // namespace ubtrace::runtime::gpu
