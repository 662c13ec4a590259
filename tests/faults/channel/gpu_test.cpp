// Defect 8: the agent of a traced CUDA program used to connect to the
// abstract socket @ubtrace-gpu.<pid> at the process's first CUDA code load,
// whether or not the CLI asked, without checking who listened, and then
// waited for PTX to inject: any local user could answer it. Now the GPU
// channel is a socketpair whose agent end the CLI passes on the first
// channel, only for a script with GPU probes; nothing is connected to by
// name. The driver is the stand-in (tests/gpu/standin) the GPU tests use.
#include "tests/faults/channel/sockets.h"
#include "tests/faults/channel/support.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::faults {
namespace {

std::string standin_dir() {
  return build_path("tests/gpu/standin");
}

bool have_standin() {
  struct stat st;
  return stat((standin_dir() + "/libcuda.so.1").c_str(), &st) == 0;
}

std::string read_all(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct GpuRun {
  bool squatted = false;
  bool squatter_called = false;
  std::string out, err, driver_image;
  std::string status;
};

// ubtrace -c chan_cuda with `script`; a local user listens on
// @ubtrace-gpu.<pid> once the program runs, before it loads CUDA code.
GpuRun run_with_squatter(const std::string &script) {
  GpuRun r;
  char dir[] = "/tmp/ubt-chan-gpu-XXXXXX";
  if (!mkdtemp(dir))
    std::abort();
  Child cli = Child::start(
      {ubtrace_binary(), "-c", fault_prog("chan_cuda"), "-e", script},
      {"LD_LIBRARY_PATH=" + standin_dir(),
       "UBT_STANDIN_DIR=" + std::string(dir)});
  auto ready = cli.wait_for_line("ready ");
  EXPECT_TRUE(ready) << cli.all_stderr();
  if (!ready)
    return r;
  int squatter = squat("ubtrace-gpu." + ready->substr(6));
  r.squatted = squatter >= 0;
  cli.write_stdin("go\n");
  EXPECT_TRUE(cli.wait_for_line("loaded ")) << cli.all_stderr();
  auto status = cli.wait_exit(60s);
  EXPECT_TRUE(status) << "ubtrace -c did not end";
  r.status = status ? describe_status(*status) : "running";
  r.out = cli.all_stdout();
  r.err = cli.all_stderr();
  if (squatter >= 0) {
    r.squatter_called = squatter_caller(squatter) >= 0;
    close(squatter);
  }
  r.driver_image = read_all(std::string(dir) + "/image-0.bin");
  std::system(("rm -rf " + std::string(dir)).c_str());
  return r;
}

const std::string kCpuProbe =
    "uprobe:" + fault_prog("chan_cuda") + ":chan_work { @calls = count(); }";

TEST(ChannelGpu, ProgramLoadingCudaCodeCallsNobodyWithoutGpuProbes) {
  if (!have_standin())
    GTEST_SKIP() << "no CUDA driver stand-in in this build";
  GpuRun r = run_with_squatter(kCpuProbe);
  ASSERT_TRUE(r.squatted);
  EXPECT_FALSE(r.squatter_called) << "the agent called a stranger";
  EXPECT_EQ(r.status, "exited 0") << r.err;
  EXPECT_NE(r.out.find("@calls: 2"), std::string::npos) << r.out << r.err;
  // The driver got the program's own module.
  EXPECT_EQ(r.driver_image.find("ubtrace:"), std::string::npos);
}

TEST(ChannelGpu, GpuProbesGoOnlyThroughThePassedChannel) {
  if (!have_standin())
    GTEST_SKIP() << "no CUDA driver stand-in in this build";
  GpuRun r =
      run_with_squatter("kernel::* { @kernels = count(); } " + kCpuProbe);
  // The name is free (the CLI does not listen there), and unused.
  ASSERT_TRUE(r.squatted) << "the GPU channel's name is predictable";
  EXPECT_FALSE(r.squatter_called) << "the agent called a stranger";
  EXPECT_EQ(r.status, "exited 0") << r.err;
  // The probes reached the module the driver loaded.
  EXPECT_NE(r.driver_image.find("// ubtrace: probe functions"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("loaded no CUDA code"), std::string::npos) << r.err;
}

} // namespace
} // namespace ubtrace::faults
