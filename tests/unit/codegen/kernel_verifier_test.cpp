// The bytecode is real eBPF: where the kernel allows it (root), programs are
// loaded through libbpf into the kernel and must pass its verifier. Host
// probe programs load as kprobe programs (their ctx starts with pt_regs);
// programs that read ubtrace's ctx extension (probe, func) are not kernel
// programs and are left out.
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

#include "compile.h"

namespace ubtrace {
namespace {

std::string g_log;

int capture(enum libbpf_print_level level, const char *fmt, va_list args) {
  char buf[8192];
  vsnprintf(buf, sizeof buf, fmt, args);
  g_log += buf;
  return 0;
}

class KernelVerifier : public ::testing::TestWithParam<const char *> {};

TEST_P(KernelVerifier, AcceptsGeneratedProgram) {
  if (geteuid() != 0)
    GTEST_SKIP() << "loading BPF programs into the kernel needs root";
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile(GetParam(), out, err, {"7", "abc"})) << err;
  g_log.clear();
  libbpf_set_print(capture);
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "ubtrace");
  bpf_object *obj = bpf_object__open_mem(out.bundle.object.data(),
                                         out.bundle.object.size(), &opts);
  ASSERT_FALSE(libbpf_get_error(obj)) << g_log;
  bpf_program *p;
  bpf_object__for_each_program(p, obj) bpf_program__set_type(p, BPF_PROG_TYPE_KPROBE);
  int rc = bpf_object__load(obj);
  bpf_object__close(obj);
  libbpf_set_print(nullptr);
  if (rc == -EPERM)
    GTEST_SKIP() << "the kernel refused bpf() (EPERM): " << g_log;
  EXPECT_EQ(rc, 0) << "kernel verifier log:\n" << g_log;
  EXPECT_EQ(g_log.find("BTF is optional, ignoring"), std::string::npos) << g_log;
}

INSTANTIATE_TEST_SUITE_P(
    Scripts, KernelVerifier,
    ::testing::Values(
        "BEGIN { printf(\"hello %d %s\\n\", 5, comm); exit(); }",
        "BEGIN { @c = count(); @s = sum(5); @mn = min(3); @mx = max(4); @a = avg(2); "
        "@st = stats(9); }",
        "BEGIN { @h = hist(12345); @h2 = hist(7, 2); @l = lhist(50, 0, 100, 10); }",
        "BEGIN { @m[pid, comm] = count(); @n[tid] = nsecs; delete(@n, tid); }",
        "BEGIN { $t = (1, \"two\", (3, 4)); @t[$t.2.1] = $t; print($t); }",
        "BEGIN { $r = (a = 1, b = \"x\"); print($r); }",
        "BEGIN { for ($i : 0..10) { @sq[$i] = $i * $i; } }",
        "BEGIN { @m[1] = 1; for ($kv : @m) { printf(\"%d\\n\", $kv.1); } }",
        "BEGIN { $i = 0; while ($i < 10) { $i++; } printf(\"%d\\n\", $i); }",
        "BEGIN { unroll(5) { @u++; } }",
        "BEGIN { if (strncmp(comm, \"ubt\", 3) == 0) { printf(\"yes\\n\"); } }",
        "BEGIN { @c = count(); if (@c > 2) { exit(); } }",
        "BEGIN { printf(\"%d %s\\n\", $1, str($2)); }",
        "BEGIN { @x = 1; clear(@x); zero(@x); print(@x); time(); }",
        "uprobe:/bin/ls:main { printf(\"%d %d\\n\", arg0, arg1); @[ustack(8)] = count(); }",
        "uretprobe:/bin/ls:main { @r = hist(retval); }",
        "uprobe:/bin/ls:main { $s = str(arg0, 16); printf(\"%s %d\\n\", $s, strlen($s)); }",
        "uprobe:/bin/ls:main { @b = buf(arg0, 8); printf(\"%r\\n\", buf(arg1, 4)); }",
        // Values past the 512-byte stack: default stacks, long strings.
        "uprobe:/bin/ls:main { @k[ustack] = count(); $s = ustack; @v = $s; "
        "printf(\"%s %s\\n\", ustack, ustack(3)); }",
        "config = { max_strlen = 2048 } uprobe:/bin/ls:main { $a = str(arg0); "
        "$t = ($a, $a, 1); @[$t] = count(); printf(\"%s %s\\n\", $a, $t.1); }",
        "BEGIN { @m[1] = 1; for ($kv : @m) { $s = ustack; @w[$s] = $kv.1; } }"));

} // namespace
} // namespace ubtrace
