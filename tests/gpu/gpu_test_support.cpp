#include "gpu_test_support.h"

#include <cstdio>
#include <dlfcn.h>
#include <elf.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::gpu_test {
namespace fs = std::filesystem;

bool cuda_available() {
  return UBT_HAVE_CUDA &&
         fs::exists(std::string(UBT_GPU_FIXTURES) + "/manifest.txt");
}

std::string fixtures_dir() {
  return UBT_GPU_FIXTURES;
}
std::string test_sources_dir() {
  return UBT_GPU_TEST_SOURCES;
}

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  std::ifstream in(fixtures_dir() + "/manifest.txt");
  Fixture f;
  while (in >> f.app >> f.variant >> f.runtime >> f.path) {
    f.path = fixtures_dir() + "/" + fs::path(f.path).filename().string();
    out.push_back(f);
  }
  return out;
}

std::string cuda_tool(std::string_view name) {
  std::string in_root =
      std::string(UBT_CUDA_ROOT) + "/bin/" + std::string(name);
  if (fs::exists(in_root))
    return in_root;
  const char *path = getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path candidate = fs::path(dir) / name;
    if (!dir.empty() && fs::exists(candidate))
      return candidate.string();
  }
  return "";
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string &path, std::string_view data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

CommandResult run_command(const std::string &command) {
  CommandResult result;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr)
    return result;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0)
    result.output.append(buf, got);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "ubt-gpu-XXXXXX").string();
  char *made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

CommandResult run_ptxas(std::string_view ptx) {
  std::string dir = make_temp_dir();
  write_file(dir + "/in.ptx", ptx);
  CommandResult r = run_command(cuda_tool("ptxas") + " -arch=sm_90 " + dir +
                                "/in.ptx -o " + dir + "/out.cubin");
  fs::remove_all(dir);
  return r;
}

std::string filecheck_path() {
  std::string path = UBT_FILECHECK;
  return fs::exists(path) ? path : std::string();
}

CommandResult filecheck(std::string_view input, std::string_view checks) {
  std::string dir = make_temp_dir();
  write_file(dir + "/input.ptx", input);
  write_file(dir + "/checks.txt", checks);
  CommandResult r = run_command(filecheck_path() + " " + dir +
                                "/checks.txt --input-file=" + dir +
                                "/input.ptx --dump-input=fail");
  fs::remove_all(dir);
  return r;
}

std::string normalize_ptx(std::string_view text) {
  std::string out;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    size_t comment = line.find("//");
    if (comment != std::string::npos)
      line.resize(comment);
    std::string squeezed;
    for (char c : line) {
      bool blank = c == ' ' || c == '\t' || c == '\r';
      if (blank && (squeezed.empty() || squeezed.back() == ' '))
        continue;
      squeezed += blank ? ' ' : c;
    }
    while (!squeezed.empty() && squeezed.back() == ' ')
      squeezed.pop_back();
    if (!squeezed.empty())
      out += squeezed + "\n";
  }
  return out;
}

namespace {

struct NvJitLinkApi {
  using Handle = void *;
  int (*create)(Handle *, uint32_t, const char **) = nullptr;
  int (*destroy)(Handle *) = nullptr;
  int (*add_data)(Handle, int, const void *, size_t, const char *) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*cubin_size)(Handle, size_t *) = nullptr;
  int (*cubin)(Handle, void *) = nullptr;
  int (*error_log_size)(Handle, size_t *) = nullptr;
  int (*error_log)(Handle, char *) = nullptr;
  std::string why;

  NvJitLinkApi() {
    std::string path = std::string(UBT_CUDA_ROOT) + "/lib64/libnvJitLink.so";
    void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr)
      lib = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      why = std::string("cannot dlopen libnvJitLink: ") + dlerror();
      return;
    }
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (fn == nullptr)
        why = std::string("libnvJitLink lacks ") + name;
    };
    sym(create, "nvJitLinkCreate");
    sym(destroy, "nvJitLinkDestroy");
    sym(add_data, "nvJitLinkAddData");
    sym(complete, "nvJitLinkComplete");
    sym(cubin_size, "nvJitLinkGetLinkedCubinSize");
    sym(cubin, "nvJitLinkGetLinkedCubin");
    sym(error_log_size, "nvJitLinkGetErrorLogSize");
    sym(error_log, "nvJitLinkGetErrorLog");
  }
};

NvJitLinkApi &api() {
  static NvJitLinkApi instance;
  return instance;
}

} // namespace

bool nvjitlink_available(std::string *why) {
  if (!api().why.empty() && why != nullptr)
    *why = api().why;
  return api().why.empty();
}

LinkResult nvjitlink(runtime::gpu::Bytes data, LinkInput kind,
                     const std::string &arch) {
  LinkResult result;
  NvJitLinkApi &a = api();
  if (!a.why.empty()) {
    result.log = a.why;
    return result;
  }
  std::string arch_option = "-arch=" + arch;
  const char *options[] = {arch_option.c_str()};
  NvJitLinkApi::Handle handle = nullptr;
  if (int rc = a.create(&handle, 1, options); rc != 0) {
    result.log = "nvJitLinkCreate failed: " + std::to_string(rc);
    return result;
  }
  int rc = a.add_data(handle, static_cast<int>(kind), data.data(), data.size(),
                      "ubtrace-test");
  if (rc == 0)
    rc = a.complete(handle);
  size_t log_size = 0;
  if (a.error_log_size(handle, &log_size) == 0 && log_size > 1) {
    std::string log(log_size, '\0');
    a.error_log(handle, log.data());
    result.log = log.c_str();
  }
  if (rc == 0) {
    size_t size = 0;
    if (a.cubin_size(handle, &size) == 0 && size > 0) {
      result.cubin.resize(size);
      result.ok = a.cubin(handle, result.cubin.data()) == 0;
    }
  } else if (result.log.empty()) {
    result.log = "nvJitLink error " + std::to_string(rc);
  }
  a.destroy(&handle);
  return result;
}

std::vector<std::string> elf_function_symbols(runtime::gpu::Bytes elf) {
  std::vector<std::string> out;
  if (elf.size() < sizeof(Elf64_Ehdr))
    return out;
  auto h = runtime::gpu::load_le<Elf64_Ehdr>(elf.data());
  for (size_t i = 0; i < h.e_shnum; ++i) {
    auto sh = runtime::gpu::load_le<Elf64_Shdr>(elf.data() + h.e_shoff +
                                                i * sizeof(Elf64_Shdr));
    if (sh.sh_type != SHT_SYMTAB)
      continue;
    auto strtab = runtime::gpu::load_le<Elf64_Shdr>(
        elf.data() + h.e_shoff + sh.sh_link * sizeof(Elf64_Shdr));
    for (size_t at = 0; at + sizeof(Elf64_Sym) <= sh.sh_size;
         at += sizeof(Elf64_Sym)) {
      auto sym =
          runtime::gpu::load_le<Elf64_Sym>(elf.data() + sh.sh_offset + at);
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC)
        out.emplace_back(reinterpret_cast<const char *>(elf.data()) +
                         strtab.sh_offset + sym.st_name);
    }
  }
  return out;
}

} // namespace ubtrace::gpu_test
