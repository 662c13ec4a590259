// --info: what this build is and what it can run here.
#include "backends/cli/info.h"

#include "backends/backend.h"
#include "backends/cli/env_config.h"
#include "backends/userspace/target.h"

#include <bpf/libbpf.h>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <iomanip>
#include <sstream>
#include <string>
#include <sys/utsname.h>
#include <vector>

// Build facts; backends/CMakeLists.txt defines them for this target.
#ifndef UBTRACE_BUILD_TYPE
#define UBTRACE_BUILD_TYPE "unknown"
#endif
#ifndef UBTRACE_LLVM_VERSION
#define UBTRACE_LLVM_VERSION "unknown"
#endif

namespace ubtrace::cli {
namespace {

std::string os_line() {
  struct utsname u{};
  if (uname(&u) != 0)
    return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.version;
}

std::string arch_line() {
  struct utsname u{};
  return uname(&u) == 0 ? u.machine : "unknown";
}

// The CUDA driver library as a traced process would load it: its path and
// version ("" when it cannot be loaded; `why` says what went wrong).
std::string find_cuda_driver(std::string &version, std::string &why) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    why = e ? e : "libcuda.so.1 cannot be loaded";
    return "";
  }
  std::string path = "libcuda.so.1";
  if (void *sym = dlsym(lib, "cuDriverGetVersion")) {
    Dl_info info{};
    if (dladdr(sym, &info) && info.dli_fname)
      path = info.dli_fname;
    int v = 0;
    // Needs no cuInit(): safe to ask without touching a device.
    auto get = reinterpret_cast<int (*)(int *)>(sym);
    if (get(&v) == 0 && v > 0)
      version = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  }
  dlclose(lib);
  return path;
}

std::vector<std::string> nvidia_devices() {
  std::vector<std::string> out;
  glob_t g{};
  if (glob("/dev/nvidia[0-9]*", 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; i++)
      out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// The CUDA toolkit (nvcc, ptxas) and its version from cuda.h.
std::string find_cuda_toolkit(std::string &version) {
  std::string root = "/usr/local/cuda";
  if (const char *env = std::getenv("CUDA_PATH"))
    root = env;
  std::error_code ec;
  if (!std::filesystem::exists(root + "/bin/ptxas", ec))
    return "";
  std::ifstream h(root + "/include/cuda.h");
  std::string line;
  const std::string key = "#define CUDA_VERSION ";
  while (std::getline(h, line))
    if (line.rfind(key, 0) == 0) {
      int v = std::atoi(line.c_str() + key.size());
      version = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
      break;
    }
  return root;
}

// "CLI (begin, end, interval)": a backend and the probe kinds the selector
// gives it.
std::string backend_line(backends::BackendKind kind) {
  return std::string(backends::backend_name(kind)) + " (" +
         backends::probe_kinds_of(kind) + ")";
}

} // namespace

void print_info(std::ostream &out) {
  out << "System\n";
  out << "  OS: " << os_line() << "\n";
  out << "  Arch: " << arch_line() << "\n\n";

  out << "Build\n";
  out << "  version: v" UBTRACE_VERSION "\n";
#if defined(__clang__)
  out << "  compiler: clang " __clang_version__ "\n";
#else
  out << "  compiler: gcc " __VERSION__ "\n";
#endif
  out << "  LLVM: " UBTRACE_LLVM_VERSION "\n";
  out << "  build type: " UBTRACE_BUILD_TYPE "\n";
  // (The agent is never instrumented: cmake/Sanitizers.cmake.)
  out << "  sanitizers: " UBTRACE_SANITIZERS "\n";
#ifdef NDEBUG
  out << "  assertions: no\n";
#else
  out << "  assertions: yes\n";
#endif
  out << "  libbpf: " << libbpf_version_string() << "\n\n";

  out << "Backends\n";
  out << "  " << backend_line(backends::BackendKind::Cli) << ": yes\n";
  auto agent = backends::find_agent_library();
  out << "  " << backend_line(backends::BackendKind::Userspace) << ": "
      << (agent ? "yes" : "no") << "\n"
      << "    agent: " << (agent ? *agent : agent.error()) << "\n";
  std::string driver_version, driver_why, toolkit_version;
  std::string driver = find_cuda_driver(driver_version, driver_why);
  auto devices = nvidia_devices();
  std::string toolkit = find_cuda_toolkit(toolkit_version);
#ifdef UBTRACE_GPU_BACKEND
  const bool backend = true;
#else
  const bool backend = false;
#endif
  const bool gpu = backend && !driver.empty() && !devices.empty();
  out << "  " << backend_line(backends::BackendKind::Gpu) << ": "
      << (gpu ? "yes" : "no") << "\n";
  out << "    backend: " << (backend ? "built" : "not in this build") << "\n";
  if (driver.empty())
    out << "    driver: no (" << driver_why << ")\n";
  else
    out << "    driver: " << driver
        << (driver_version.empty() ? "" : " (CUDA " + driver_version + ")")
        << "\n";
  if (devices.empty()) {
    out << "    devices: none (no /dev/nvidia* device nodes)\n";
  } else {
    out << "    devices:";
    for (const auto &d : devices)
      out << " " << d;
    out << "\n";
  }
  if (toolkit.empty())
    out << "    toolkit: no (no ptxas under $CUDA_PATH or /usr/local/cuda)\n";
  else
    out << "    toolkit: " << toolkit
        << (toolkit_version.empty() ? "" : " (CUDA " + toolkit_version + ")")
        << "\n";
  out << "  kernel probes (kprobe, tracepoint, ...): no (ubtrace does not use "
         "the kernel's tracing)\n\n";

  out << "Features\n";
#if __has_include("runtime/jit/orc_jit.h")
  out << "  JIT (eBPF to x86-64): yes (interpreter when it fails)\n";
#else
  out << "  JIT (eBPF to x86-64): no (interpreter)\n";
#endif
  out << "  USDT (with semaphores): yes\n";
  out << "  output formats: text, json, folded\n";
  out << "  C definitions in scripts: yes (no C preprocessor, no BTF)\n";
  out << "  system-wide tracing: no (-c CMD or -p PID)\n\n";

  out << "Config (UBTRACE_<NAME> or BPFTRACE_<NAME> overrides the script)\n";
  out << "  " << std::left << std::setw(22) << "name" << std::setw(9) << "kind"
      << std::setw(12) << "default"
      << "environment\n";
  for (const auto &s : runtime::config_vars()) {
    std::string def =
        s.default_text.empty() ? "\"\"" : std::string(s.default_text);
    auto env = env_value_for(s);
    std::ostringstream row;
    row << "  " << std::left << std::setw(22) << s.name << std::setw(9)
        << runtime::config_kind_name(s.kind) << std::setw(12) << def
        << (env ? env->variable + "=" + env->value : "");
    std::string line = row.str();
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

} // namespace ubtrace::cli
