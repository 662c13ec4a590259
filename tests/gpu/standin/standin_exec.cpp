// The stand-in driver's device: with UBT_STANDIN_EXEC=1, kernels the
// application launches run on the host through ptxsim (tests/gpu/ptxsim),
// from the PTX of the image the driver was given. Under ubtrace that image
// is the agent's rewritten module, probes included, so the probes' maps
// fill as they would on a GPU and ubtrace prints what they computed.
// "Device memory" is the stand-in's host memory, so kernel parameters,
// the agent's baked map table and cuMemcpy* all mean what they say.
//
// C entry points for libcuda_standin.c; nothing here is exported from the
// library (its version script exports the driver's cu* names only).
#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/image.h"
#include "tests/gpu/ptxsim/ptxsim.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace {

using namespace ubtrace;

struct Loaded {
  std::unique_ptr<ptxsim::Module> module; // null: no PTX in the image
  std::string why;                        // with a null module
};

std::mutex g_lock;
std::map<int, Loaded> g_loaded; // by the stand-in's module number

void set_why(char *why, size_t len, const std::string &text) {
  if (why && len)
    std::snprintf(why, len, "%s", text.c_str());
}

// The PTX the driver would JIT from `image`: the text itself, or a fatbin's
// PTX entry for the newest architecture up to the stand-in's sm_90.
Result<std::string> image_ptx(const uint8_t *bytes, size_t size) {
  auto view = runtime::gpu::view_image(runtime::gpu::Bytes(bytes, size));
  if (!view)
    return make_error(view.error());
  switch (view->kind) {
  case runtime::gpu::ImageKind::Ptx:
    return std::string(reinterpret_cast<const char *>(view->bytes.data()),
                       view->bytes.size());
  case runtime::gpu::ImageKind::Fatbin:
  case runtime::gpu::ImageKind::FatbinWrapper:
    break;
  case runtime::gpu::ImageKind::Cubin:
    return make_error("a cubin (SASS only): nothing to interpret");
  case runtime::gpu::ImageKind::Unknown:
    return make_error("an image of unknown kind");
  }
  auto fatbin = runtime::gpu::parse_fatbin(view->bytes);
  if (!fatbin)
    return make_error(fatbin.error());
  const runtime::gpu::FatbinEntry *best = nullptr;
  for (const runtime::gpu::FatbinEntry &e : fatbin->entries)
    if (e.kind == runtime::gpu::EntryKind::Ptx && e.sm_arch <= 90 &&
        (!best || e.sm_arch > best->sm_arch))
      best = &e;
  if (!best)
    return make_error("a fatbin with no PTX entry (SASS only): nothing to "
                      "interpret");
  return runtime::gpu::entry_ptx(*best);
}

Loaded &load_locked(int index, const uint8_t *bytes, size_t size) {
  auto found = g_loaded.find(index);
  if (found != g_loaded.end())
    return found->second;
  Loaded &l = g_loaded[index];
  auto ptx = image_ptx(bytes, size);
  if (!ptx) {
    l.why = ptx.error();
    return l;
  }
  auto module = ptxsim::Module::load(*ptx);
  if (!module) {
    l.why = "ptxsim cannot load the module: " + module.error();
    return l;
  }
  l.module = std::move(*module);
  return l;
}

} // namespace

extern "C" {

// 1 when launches execute (UBT_STANDIN_EXEC=1).
int ubt_standin_exec_enabled(void) {
  const char *v = std::getenv("UBT_STANDIN_EXEC");
  return v && std::strcmp(v, "1") == 0;
}

// cuModuleGetGlobal for a module the stand-in numbered `index`: 0 and the
// variable's host address and size, or -1.
int ubt_standin_exec_global(int index, const uint8_t *bytes, size_t size,
                            const char *name, unsigned long long *address,
                            size_t *bytes_out) {
  std::lock_guard<std::mutex> lock(g_lock);
  Loaded &l = load_locked(index, bytes, size);
  if (!l.module)
    return -1;
  auto g = l.module->global(name);
  if (!g)
    return -1;
  *address = reinterpret_cast<uintptr_t>(g->first);
  *bytes_out = g->second;
  return 0;
}

// Runs `kernel` of module `index` to completion. 0 when it ran (and
// `instructions` holds the PTX instructions its threads executed); 1 when
// the module has no PTX (the launch does nothing; `why` says so); -1 when
// the kernel failed (`why`: ptxsim's error, e.g. an illegal address).
int ubt_standin_exec_launch(int index, const uint8_t *bytes, size_t size,
                            const char *kernel, const unsigned grid[3],
                            const unsigned block[3], unsigned shared,
                            void **params, void **extra, char *why,
                            size_t why_len,
                            unsigned long long *instructions) {
  const ptxsim::Module *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_lock);
    Loaded &l = load_locked(index, bytes, size);
    if (!l.module) {
      set_why(why, why_len, l.why);
      return 1;
    }
    module = l.module.get();
  }
  auto layout = module->params(kernel);
  if (!layout) {
    set_why(why, why_len, layout.error());
    return -1;
  }
  // CU_LAUNCH_PARAM_BUFFER_POINTER (1) / _SIZE (2) / _END (0): the
  // parameters packed in one buffer at their aligned offsets.
  std::vector<void *> from_buffer;
  if (!params && extra) {
    uint8_t *buffer = nullptr;
    for (void **e = extra; *e; e += 2)
      if (reinterpret_cast<uintptr_t>(e[0]) == 1)
        buffer = static_cast<uint8_t *>(e[1]);
    size_t at = 0;
    for (const ptxsim::KernelParam &p : *layout) {
      size_t align = p.align ? p.align : 1;
      at = (at + align - 1) / align * align;
      from_buffer.push_back(buffer + at);
      at += p.size;
    }
    params = from_buffer.data();
  }
  if (!params && !layout->empty()) {
    set_why(why, why_len, "no kernel parameters given");
    return -1;
  }
  ptxsim::LaunchOptions options;
  options.max_instructions = uint64_t(1) << 34; // a hang ends, not the test
  auto ran = module->launch(kernel, {grid[0], grid[1], grid[2]},
                            {block[0], block[1], block[2]}, shared, params,
                            options);
  if (!ran) {
    set_why(why, why_len, ran.error());
    return -1;
  }
  *instructions = ran->instructions;
  return 0;
}

} // extern "C"
