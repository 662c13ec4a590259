// ubtrace_ptxsim_throughput: how fast ptxsim interprets, on one host thread
// and on several: matmul (tiled, shared memory, barriers), plain vector_add
// and vector_add with ubtrace's probes merged in. Prints instructions per
// second; not a test (timings are never asserted).
//   ubtrace_ptxsim_throughput [host_threads]
#include "tests/gpu/ptxsim/ptxsim.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace ubtrace::ptxsim;

namespace {

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void report(const char *what, const ubtrace::Result<LaunchStats> &r,
            double seconds) {
  if (!r) {
    std::printf("%-28s FAILED: %s\n", what, r.error().c_str());
    return;
  }
  std::printf("%-28s %10llu threads %12llu instructions %7.3f s %8.1f M "
              "instructions/s\n",
              what, static_cast<unsigned long long>(r->threads),
              static_cast<unsigned long long>(r->instructions), seconds,
              static_cast<double>(r->instructions) / seconds / 1e6);
}

template <class F> void timed(const char *what, F run) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = run();
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  report(what, r, s);
}

} // namespace

int main(int argc, char **argv) {
  LaunchOptions options;
  options.host_threads =
      argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 1;
  std::printf("host threads: %u\n", options.host_threads);

  auto matmul = Module::load(read_text(UBT_PTXSIM_PTX_DIR "/matmul.ptx"));
  if (matmul) {
    int n = 256;
    std::vector<float> a(size_t(n) * n, 1.5f), b(size_t(n) * n, 0.5f),
        c(size_t(n) * n);
    const float *pa = a.data(), *pb = b.data();
    float *pc = c.data();
    void *params[] = {&pa, &pb, &pc, &n};
    timed("matmul 256x256", [&] {
      return (*matmul)->launch("_Z12matmul_tiledPKfS0_Pfi", {16, 16}, {16, 16},
                               0, params, options);
    });
  }

  int n = 1 << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n);
  const float *pa = a.data(), *pb = b.data();
  float *pc = c.data();
  void *params[] = {&pa, &pb, &pc, &n};
  auto plain = Module::load(read_text(UBT_PTXSIM_PTX_DIR "/vector_add.ptx"));
  if (plain)
    timed("vector_add 1M", [&] {
      return (*plain)->launch("_Z10vector_addPKfS0_Pfi", {uint32_t(n / 256)},
                              {256}, 0, params, options);
    });

  // The probed module with its map table re-baked to host buffers.
  std::vector<std::unique_ptr<uint64_t[]>> maps;
  std::string table;
  for (int i = 0; i < 10; ++i) {
    uint64_t address = 0;
    if (i != 8) {
      maps.emplace_back(new uint64_t[(size_t(2) << 20) / 8]());
      address = reinterpret_cast<uintptr_t>(maps.back().get());
    }
    table += (i ? ", " : "") + std::to_string(address);
  }
  maps[7][3] = size_t(1) << 20; // the event ring's capacity
  std::string ptx = std::regex_replace(
      read_text(UBT_PTXSIM_TESTDATA "/vector_add_probed.ptx"),
      std::regex(R"((__ubt_gpu_maps\[10\] = )\{[^}]*\})"), "$1{" + table + "}");
  auto probed = Module::load(ptx);
  if (probed) {
    int m = 1 << 15; // the printf ring holds 32768 records
    void *small[] = {&pa, &pb, &pc, &m};
    timed("vector_add+probes 32K", [&] {
      return (*probed)->launch("_Z10vector_addPKfS0_Pfi", {uint32_t(m / 256)},
                               {256}, 0, small, options);
    });
  }
  return 0;
}
