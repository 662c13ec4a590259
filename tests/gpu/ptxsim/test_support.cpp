#include "tests/gpu/ptxsim/test_support.h"

#include <fstream>
#include <sstream>

namespace ubtrace::ptxsim::test {

bool apps_available() {
  return UBT_PTXSIM_HAVE_CUDA;
}

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string app_ptx(const std::string &app) {
  return read_text(std::string(UBT_PTXSIM_PTX_DIR) + "/" + app + ".ptx");
}

std::string testdata(const std::string &name) {
  return read_text(std::string(UBT_PTXSIM_TESTDATA) + "/" + name);
}

std::unique_ptr<Module> load_or_fail(const std::string &ptx) {
  auto m = Module::load(ptx);
  if (!m) {
    ADD_FAILURE() << "ptxsim refused the module: " << m.error();
    return nullptr;
  }
  return std::move(*m);
}

std::string launch_error(const Module &m, std::string_view kernel, Dim3 grid,
                         Dim3 block, void *const *params,
                         const LaunchOptions &options) {
  auto r = m.launch(kernel, grid, block, 0, params, options);
  if (r) {
    ADD_FAILURE() << "the launch of " << kernel << " ran to the end";
    return "";
  }
  return r.error();
}

} // namespace ubtrace::ptxsim::test
