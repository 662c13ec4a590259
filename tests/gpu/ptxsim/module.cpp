// Module: the public face of a parsed PTX module.
#include "tests/gpu/ptxsim/ir.h"

namespace ubtrace::ptxsim {

Module::Module(std::unique_ptr<ModuleImpl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;

Result<std::unique_ptr<Module>> Module::load(std::string_view ptx) {
  auto impl = parse_module(ptx);
  if (!impl)
    return make_error(impl.error());
  return std::unique_ptr<Module>(new Module(std::move(*impl)));
}

std::vector<std::string> Module::kernels() const {
  std::vector<std::string> names;
  for (const Function &f : impl_->functions)
    if (f.is_entry && f.defined)
      names.push_back(f.name);
  return names;
}

namespace {
const Function *find_kernel(const ModuleImpl &m, std::string_view name) {
  auto it = m.function_index.find(name);
  if (it == m.function_index.end())
    return nullptr;
  const Function &f = m.functions[it->second];
  return f.is_entry && f.defined ? &f : nullptr;
}
} // namespace

Result<std::vector<KernelParam>> Module::params(std::string_view kernel) const {
  const Function *f = find_kernel(*impl_, kernel);
  if (!f)
    return make_error("no kernel '" + std::string(kernel) + "' in the module");
  std::vector<KernelParam> out;
  for (const ParamSlot &p : f->params)
    out.push_back(KernelParam{p.size, p.align});
  return out;
}

Result<std::pair<void *, size_t>> Module::global(std::string_view name) const {
  auto it = impl_->global_index.find(name);
  if (it == impl_->global_index.end())
    return make_error("no module variable '" + std::string(name) + "'");
  return std::pair<void *, size_t>(it->second->address, it->second->size);
}

Result<LaunchStats> Module::launch(std::string_view kernel, Dim3 grid,
                                   Dim3 block, uint32_t dynamic_shared_bytes,
                                   void *const *params,
                                   const LaunchOptions &options) const {
  const Function *f = find_kernel(*impl_, kernel);
  if (!f)
    return make_error("no kernel '" + std::string(kernel) + "' in the module");
  return launch_kernel(*impl_, *f, grid, block, dynamic_shared_bytes, params,
                       options);
}

} // namespace ubtrace::ptxsim
