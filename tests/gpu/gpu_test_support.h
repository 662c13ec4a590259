// Shared helpers of the GPU offline tests: the nvcc-built fixtures, CUDA
// tools (ptxas, fatbinary, cuobjdump), FileCheck and nvJitLink (dlopen).
#pragma once

#include "runtime/gpu/bytes.h"

#include <gtest/gtest.h>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::gpu_test {

// Skips the test when the fixtures were not built (no CUDA toolkit).
#define UBT_REQUIRE_FIXTURES()                                                 \
  do {                                                                         \
    if (!::ubtrace::gpu_test::cuda_available())                                \
      GTEST_SKIP() << "CUDA toolkit absent: the nvcc-built fixtures are not "  \
                      "there";                                                 \
  } while (0)

struct Fixture {
  std::string app;     // vector_add, matmul, param_types, multi_kernel
  std::string variant; // default, nocompress, compressall, lz4, lineinfo, G
  std::string runtime; // static, shared
  std::string path;
  std::string name() const { return app + "_" + variant + "_" + runtime; }
};

bool cuda_available();
std::vector<Fixture> fixtures(); // from the manifest CMake wrote
std::string fixtures_dir();
std::string test_sources_dir();

// A CUDA tool under the toolkit or on PATH; empty when absent.
std::string cuda_tool(std::string_view name);

std::vector<uint8_t> read_file(const std::string &path);
std::string read_text(const std::string &path);
void write_file(const std::string &path, std::string_view data);

struct CommandResult {
  int status = -1;    // exit status; -1 if it could not run
  std::string output; // stdout and stderr together
};
CommandResult run_command(const std::string &command);

// A fresh directory for one test's files.
std::string make_temp_dir();

// ptxas -arch=sm_90 on the text; status 0 when it accepts it.
CommandResult run_ptxas(std::string_view ptx);

// FileCheck `checks` against `input`; empty path when FileCheck is absent.
std::string filecheck_path();
CommandResult filecheck(std::string_view input, std::string_view checks);

// PTX as fatbinary stores it, for comparing with nvcc's .ptx: comments
// gone, every line trimmed, runs of blanks made one space.
std::string normalize_ptx(std::string_view text);

// nvJitLink, loaded with dlopen from the toolkit.
struct LinkResult {
  bool ok = false;
  std::string log;
  std::vector<uint8_t> cubin;
};
enum class LinkInput { Cubin = 1, Ptx = 2, Fatbin = 4 };
bool nvjitlink_available(std::string *why);
LinkResult nvjitlink(runtime::gpu::Bytes data, LinkInput kind,
                     const std::string &arch = "sm_90");

// Names of the FUNC symbols of an ELF (a cubin).
std::vector<std::string> elf_function_symbols(runtime::gpu::Bytes elf);

} // namespace ubtrace::gpu_test
