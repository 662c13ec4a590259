// Helpers of ptxsim's tests: the sample apps' PTX (nvcc -ptx at build
// time), the test data folder, and a launch that fails the test with
// ptxsim's error.
#pragma once

#include "tests/gpu/ptxsim/ptxsim.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace ubtrace::ptxsim::test {

// Skips the test when the toolkit is absent (no PTX of the apps).
#define UBT_REQUIRE_APP_PTX()                                                  \
  do {                                                                         \
    if (!::ubtrace::ptxsim::test::apps_available())                            \
      GTEST_SKIP() << "CUDA toolkit absent: the apps' PTX was not built";      \
  } while (0)

bool apps_available();
std::string read_text(const std::string &path);
std::string
app_ptx(const std::string &app); // nvcc's PTX of tests/gpu/apps/<app>.cu
std::string testdata(const std::string &name);

// Loads PTX text; fails the test (returns null) if ptxsim refuses it.
std::unique_ptr<Module> load_or_fail(const std::string &ptx);

// ptxsim's error for a launch that must fail; "" (and a test failure) if it
// ran to the end.
std::string launch_error(const Module &m, std::string_view kernel, Dim3 grid,
                         Dim3 block, void *const *params = nullptr,
                         const LaunchOptions &options = {});

} // namespace ubtrace::ptxsim::test
