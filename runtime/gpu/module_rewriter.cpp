#include "runtime/gpu/module_rewriter.h"

#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/fatbin_writer.h"

namespace ubtrace::runtime::gpu {
namespace {

// The PTX entry to instrument: the highest architecture the device runs.
const FatbinEntry *pick_ptx(const Fatbin &fatbin, uint32_t device_sm) {
  const FatbinEntry *best = nullptr;
  for (const FatbinEntry &e : fatbin.entries) {
    if (e.kind != EntryKind::Ptx)
      continue;
    if (device_sm != 0 && e.sm_arch > device_sm)
      continue;
    if (best == nullptr || e.sm_arch > best->sm_arch)
      best = &e;
  }
  return best;
}

void take_injection(RewrittenImage &out, InjectionResult &injection) {
  out.outcome = RewriteOutcome::Instrumented;
  out.kernels = std::move(injection.kernels);
  out.renamed = std::move(injection.renamed);
}

} // namespace

Result<std::unique_ptr<ModuleRewriter>>
ModuleRewriter::create(ProbeProgram program, RewriteOptions options) {
  std::unique_ptr<ModuleRewriter> rewriter(
      new ModuleRewriter(std::move(program), options));
  auto probe = parse_ptx(rewriter->program_.ptx);
  if (!probe)
    return make_error("probe PTX: " + probe.error());
  rewriter->probe_ = std::move(*probe);
  for (const ProbeAttachment &a : rewriter->program_.attachments) {
    const PtxFunction *fn = rewriter->probe_.find_function(a.function);
    if (fn == nullptr || !fn->has_body || fn->is_entry)
      return make_error("probe PTX defines no .func " + a.function);
  }
  return rewriter;
}

Result<const RewrittenImage *> ModuleRewriter::rewrite(const void *image) {
  auto view = view_image(image);
  if (!view)
    return std::move(view).take_error();
  return rewrite(*view);
}

Result<const RewrittenImage *> ModuleRewriter::rewrite(const ImageView &view) {
  if (view.kind == ImageKind::Unknown)
    return make_error("not a module image");
  uint8_t kind = static_cast<uint8_t>(view.kind);
  ContentHash key =
      combine(hash_content(view.bytes), hash_content(Bytes(&kind, 1)));
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = cache_.find(key);
  if (found != cache_.end()) {
    ++hits_;
    return static_cast<const RewrittenImage *>(found->second.get());
  }
  ++rewrites_;
  auto result = rewrite_uncached(view);
  const RewrittenImage *out = result.get();
  cache_.emplace(key, std::move(result));
  return out;
}

std::unique_ptr<RewrittenImage>
ModuleRewriter::rewrite_uncached(const ImageView &view) {
  auto out = std::make_unique<RewrittenImage>();
  out->input_kind = view.kind;
  auto fail = [&](RewriteOutcome outcome, std::string note) {
    out->outcome = outcome;
    out->note = std::move(note);
    out->image.clear();
    return std::move(out);
  };
  switch (view.kind) {
  case ImageKind::Unknown:
    return fail(RewriteOutcome::Failed, "not a module image");
  case ImageKind::Cubin:
    return fail(RewriteOutcome::NoPtx, "a cubin carries no PTX");
  case ImageKind::Ptx: {
    std::string_view text(reinterpret_cast<const char *>(view.bytes.data()),
                          view.bytes.size());
    auto injected = inject_probes(text, probe_, program_);
    if (!injected)
      return fail(RewriteOutcome::Failed, injected.error());
    if (!injected->changed())
      return fail(RewriteOutcome::NoMatch, "");
    out->image.assign(injected->ptx.begin(), injected->ptx.end());
    out->image.push_back(0);
    take_injection(*out, *injected);
    return out;
  }
  case ImageKind::Fatbin:
  case ImageKind::FatbinWrapper:
    break;
  }

  auto fatbin = parse_fatbin(view.bytes);
  if (!fatbin)
    return fail(RewriteOutcome::Failed, fatbin.error());
  const FatbinEntry *entry = pick_ptx(*fatbin, options_.device_sm);
  if (entry == nullptr)
    return fail(RewriteOutcome::NoPtx, "the fatbin holds no PTX for sm_" +
                                           std::to_string(options_.device_sm) +
                                           " or below");
  auto ptx = entry_ptx(*entry);
  if (!ptx)
    return fail(RewriteOutcome::Failed, ptx.error());
  auto injected = inject_probes(*ptx, probe_, program_);
  if (!injected)
    return fail(RewriteOutcome::Failed, injected.error());
  if (!injected->changed())
    return fail(RewriteOutcome::NoMatch, "");
  // Only the rewritten PTX goes on: with no SASS left, the driver has to
  // JIT-compile it (the SASS would run the uninstrumented code).
  FatbinEntrySpec spec = replacement_ptx_entry(
      *entry, injected->ptx, static_cast<uint16_t>(injected->version_major),
      static_cast<uint16_t>(injected->version_minor));
  out->image = write_fatbin(std::span<const FatbinEntrySpec>(&spec, 1));
  out->ptx_arch = entry->sm_arch;
  take_injection(*out, *injected);
  if (view.kind == ImageKind::FatbinWrapper) {
    out->wrapper = *view.wrapper;
    out->wrapper.data = out->image.data();
  }
  return out;
}

size_t ModuleRewriter::rewrites_performed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rewrites_;
}

size_t ModuleRewriter::cache_hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

} // namespace ubtrace::runtime::gpu
