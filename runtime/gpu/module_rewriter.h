// The piece the agent calls from its driver hooks: given a module image as
// the application passed it, return the image to hand the driver instead.
// Identical images (by content) are rewritten once and served from a cache
// afterwards; results live as long as the rewriter, so the pointers handed
// to the driver stay valid.
#pragma once

#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/gpu/image.h"
#include "runtime/gpu/ptx_inject.h"

#include <memory>
#include <mutex>
#include <unordered_map>

namespace ubtrace::runtime::gpu {

struct RewriteOptions {
  // The device's SM number (90 for an H100/H200). The PTX entry with the
  // highest architecture not above it is instrumented; 0 takes the highest.
  uint32_t device_sm = 0;
};

enum class RewriteOutcome : uint8_t {
  Instrumented, // hand the driver driver_image()
  NoMatch,      // no kernel matched any attachment: pass the original on
  NoPtx,        // only SASS (or no usable PTX): pass on, warn the user
  Failed,       // the module could not be rewritten (note says why)
};

struct RewrittenImage {
  RewriteOutcome outcome = RewriteOutcome::NoMatch;
  ImageKind input_kind = ImageKind::Unknown;
  // Instrumented: a fatbin holding only the rewritten PTX entry, or (for a
  // PTX input) the rewritten PTX text with its NUL.
  std::vector<uint8_t> image;
  // Instrumented wrapper input: a wrapper like the original pointing at
  // `image`, for __cudaRegisterFatBinary.
  FatbinWrapper wrapper{};
  std::vector<InstrumentedKernel> kernels;
  std::vector<std::pair<std::string, std::string>> renamed;
  uint32_t ptx_arch = 0; // architecture of the PTX entry instrumented
  std::string note;      // why not instrumented, for NoPtx/Failed

  // What to pass to the driver in place of the original pointer.
  const void *driver_image() const {
    if (input_kind == ImageKind::FatbinWrapper)
      return &wrapper;
    return image.data();
  }
};

class ModuleRewriter {
public:
  // Parses the probe PTX once; fails if it does not parse or an attachment
  // names a function it lacks.
  static Result<std::unique_ptr<ModuleRewriter>>
  create(ProbeProgram program, RewriteOptions options = {});

  // Views the image behind a driver-call pointer, then rewrites it.
  Result<const RewrittenImage *> rewrite(const void *image);
  // Rewrites an image already viewed. Errors only for images that cannot
  // be read; modules that cannot be instrumented come back as outcomes.
  Result<const RewrittenImage *> rewrite(const ImageView &view);

  size_t rewrites_performed() const; // cache misses
  size_t cache_hits() const;

private:
  ModuleRewriter(ProbeProgram program, RewriteOptions options)
      : program_(std::move(program)), options_(options) {}
  std::unique_ptr<RewrittenImage> rewrite_uncached(const ImageView &view);

  ProbeProgram program_;
  PtxModule probe_; // views into program_.ptx
  RewriteOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<ContentHash, std::unique_ptr<RewrittenImage>,
                     ContentHashHasher>
      cache_;
  size_t rewrites_ = 0;
  size_t hits_ = 0;
};

} // namespace ubtrace::runtime::gpu
