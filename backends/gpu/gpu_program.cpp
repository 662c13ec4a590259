#include "backends/gpu/gpu_program.h"

#include "backends/gpu/probe_ids.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/vm/loader.h"
#include "runtime/vm/verifier.h"

#include <climits>
#include <cstdlib>
#include <linux/bpf.h>
#include <map>
#include <unistd.h>

namespace ubtrace::backends::gpu {

std::string resolve_binary(const std::string &bin) {
  if (bin.empty() || bin == "*" || bin.find('*') != std::string::npos)
    return bin;
  char buf[PATH_MAX];
  if (bin.find('/') != std::string::npos)
    return realpath(bin.c_str(), buf) ? std::string(buf) : bin;
  const char *path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t at = 0;
  while (at <= dirs.size()) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos)
      end = dirs.size();
    std::string candidate = dirs.substr(at, end - at) + "/" + bin;
    if (access(candidate.c_str(), X_OK) == 0 &&
        realpath(candidate.c_str(), buf))
      return buf;
    at = end + 1;
  }
  return bin;
}

bool is_gpu_probe(const runtime::ProbeSpec &probe) {
  switch (probe.kind) {
  case runtime::ProbeKind::GpuKernelEntry:
  case runtime::ProbeKind::GpuKernelExit:
    return true;
  case runtime::ProbeKind::Begin:
  case runtime::ProbeKind::End:
  case runtime::ProbeKind::Interval:
  case runtime::ProbeKind::Uprobe:
  case runtime::ProbeKind::Uretprobe:
  case runtime::ProbeKind::Usdt:
  case runtime::ProbeKind::SelfSignal:
  case runtime::ProbeKind::Bench:
  case runtime::ProbeKind::Profile:
  case runtime::ProbeKind::Syscall:
  case runtime::ProbeKind::PerfEvent:
  case runtime::ProbeKind::Test:
    return false;
  }
  return false;
}

bool has_gpu_probes(const runtime::Bundle &bundle) {
  for (const auto &p : bundle.probes)
    if (is_gpu_probe(p))
      return true;
  return false;
}

namespace {

// "ubtrace_gpu/p3" -> "__ubt_probe_p3": a PTX identifier.
std::string function_for(const std::string &section) {
  std::string out = "__ubt_probe_";
  size_t slash = section.find('/');
  for (char c : section.substr(slash == std::string::npos ? 0 : slash + 1))
    out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

} // namespace

Result<GpuProgram> compile_gpu_program(const runtime::Bundle &bundle,
                                       const GpuCompileOptions &options) {
  auto object = vm::load_object(bundle.object);
  if (!object)
    return make_error("cannot load the BPF object: " + object.error());
  auto layouts = runtime::gpu::plan_device_maps(bundle.maps, options.plan);
  if (!layouts)
    return make_error("GPU maps: " + layouts.error());

  // The object's maps in its own order, as the programs index them.
  std::vector<runtime::gpu::DeviceMapLayout> object_maps;
  for (const vm::MapDef &def : object->maps) {
    runtime::gpu::DeviceMapLayout layout; // None: not reachable on the GPU
    for (const runtime::gpu::DeviceMapLayout &l : *layouts)
      if (bundle.maps[l.index].object_name == def.name)
        layout = l;
    object_maps.push_back(layout);
  }

  GpuProgram out;
  out.maps = *layouts;
  std::map<std::string, vm::VerifiedProgram> verified; // by section
  std::map<std::string, size_t> probe_of_section;      // index in `probes`
  std::vector<jit::NvptxProbe> probes;
  for (size_t i = 0; i < bundle.probes.size(); ++i) {
    const runtime::ProbeSpec &spec = bundle.probes[i];
    if (!is_gpu_probe(spec) || verified.count(spec.section))
      continue;
    const vm::Program *prog = nullptr;
    for (const vm::Program &p : object->programs)
      if (p.section == spec.section)
        prog = &p;
    if (!prog)
      return make_error("BUG: no program in section " + spec.section);
    auto v = vm::verify(*prog, object->maps, jit::gpu_helper_protos(),
                        jit::gpu_context_info());
    if (!v)
      return make_error("the verifier rejected the program of " + spec.name +
                        ": " + v.error());
    for (const vm::HelperCallSite &call : v->helper_calls) {
      out.sends_events |= call.helper == BPF_FUNC_ringbuf_output;
      out.reads_kernel_id |= call.helper == runtime::gpu::kHelperGpuKernelId ||
                             call.helper == runtime::gpu::kHelperGpuProbeId;
    }
    verified.emplace(spec.section, std::move(*v));
  }
  for (auto &[section, program] : verified) {
    probe_of_section[section] = probes.size();
    probes.push_back({&program, function_for(section)});
  }
  if (probes.empty())
    return make_error("the script has no GPU probes");

  // `probe`: which attach point fired, by site and kernel (probe_ids.h).
  std::vector<std::string> binaries(bundle.probes.size());
  for (size_t i = 0; i < bundle.probes.size(); ++i)
    if (is_gpu_probe(bundle.probes[i]))
      binaries[i] = resolve_binary(bundle.probes[i].target);
  const KnownKernels *kernels =
      out.reads_kernel_id && options.kernels ? options.kernels() : nullptr;
  GpuProbeIds ids =
      plan_probe_ids(bundle, binaries, kernels, options.first_new_probe_id);
  jit::NvptxOptions nvptx = options.nvptx;
  nvptx.probe_ids = std::move(ids.rules);
  out.probe_names = std::move(ids.new_names);
  out.binaries = binaries;

  auto module = jit::compile_nvptx(
      probes, object_maps, static_cast<uint32_t>(bundle.maps.size()), nvptx);
  if (!module) {
    // Name the probe whose program failed (the error starts with its
    // function name).
    std::string error = module.error();
    for (size_t i = 0; i < bundle.probes.size(); ++i) {
      const auto &spec = bundle.probes[i];
      std::string fn = is_gpu_probe(spec) ? function_for(spec.section) : "";
      if (!fn.empty() && error.rfind(fn + ":", 0) == 0)
        return make_error(spec.name + ":" + error.substr(fn.size() + 1));
    }
    return make_error(error);
  }
  out.ptx = std::move(module->ptx);
  out.map_table_entries = module->map_table_entries;
  for (size_t i = 0; i < bundle.probes.size(); ++i) {
    const runtime::ProbeSpec &spec = bundle.probes[i];
    if (!is_gpu_probe(spec))
      continue;
    const jit::NvptxFunction &fn =
        module->functions[probe_of_section.at(spec.section)];
    GpuAttachment a;
    a.attachment.site = spec.kind == runtime::ProbeKind::GpuKernelEntry
                            ? runtime::gpu::ProbeSite::Entry
                            : runtime::gpu::ProbeSite::Exit;
    a.attachment.kernel_pattern = spec.function;
    a.attachment.function = fn.name;
    a.attachment.arg_mask = fn.arg_mask;
    a.binary = binaries[i];
    a.probe = i;
    out.attachments.push_back(std::move(a));
  }
  return out;
}

runtime::gpu::ProbeProgram probe_program(const GpuProgram &program) {
  runtime::gpu::ProbeProgram p;
  p.ptx = program.ptx;
  for (const GpuAttachment &a : program.attachments)
    p.attachments.push_back(a.attachment);
  return p;
}

} // namespace ubtrace::backends::gpu
