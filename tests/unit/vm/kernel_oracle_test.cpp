// The kernel's own verifier as an oracle: every program of the test objects
// that the running kernel accepts, ours must accept too (ours may accept
// more: it knows the userspace VM's rules). Needs root and bpf(); skips
// where the kernel refuses to load BPF at all.
#include "test_runtime.h"

#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <gtest/gtest.h>

namespace ubtrace::vm::test {
namespace {

int quiet(enum libbpf_print_level, const char *, va_list) {
  return 0;
}

// The kernel's verdict on one program of an object: 0 when it loads.
int kernel_verdict(const std::string &path, const std::string &program) {
  libbpf_set_print(quiet);
  bpf_object *obj = bpf_object__open_file(path.c_str(), nullptr);
  if (!obj)
    return -errno;
  bpf_program *p;
  bpf_object__for_each_program(p, obj)
      bpf_program__set_autoload(p, program == bpf_program__name(p));
  int err = bpf_object__load(obj);
  bpf_object__close(obj);
  return err;
}

TEST(KernelOracle, WhatTheKernelAcceptsWeAccept) {
  int probe = kernel_verdict(prog_path("calls"), "direct");
  if (probe == -EPERM || probe == -EACCES || probe == -ENOSYS)
    GTEST_SKIP() << "the kernel does not load BPF here: " << strerror(-probe);
  ASSERT_EQ(probe, 0) << "the kernel rejects a trivial program";
  int kernel_accepted = 0, we_accept_more = 0;
  for (const char *name : {"alu", "alu_v4", "maps", "strings", "loops", "calls",
                           "callbacks", "globals", "tracing"}) {
    Runtime rt = Runtime::from_file(name);
    for (const Program &p : rt.object().programs) {
      int kernel = kernel_verdict(prog_path(name), p.name);
      auto ours = rt.verify(p.name, kPtRegsContext);
      if (kernel == 0) {
        ++kernel_accepted;
        EXPECT_TRUE(ours) << name << ":" << p.name << ": " << ours.error();
      } else if (ours) {
        ++we_accept_more;
      }
    }
  }
  EXPECT_GE(kernel_accepted, 20);
  // callbacks:each keeps its loop counter in a 4-byte stack slot the kernel
  // does not track; ours does.
  EXPECT_GE(we_accept_more, 1);
}

} // namespace
} // namespace ubtrace::vm::test
