// Semantic analysis of builtins: their types, and the probe types each may
// be used in (host CLI probes, uprobes, uretprobes, GPU kernel probes).
#include "ast/builtins.h"
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

// The type of `expr` in `probe`, or the diagnostics.
std::string type_in(const std::string &probe, const std::string &expr) {
  Frontend f = analyse(probe + " { $x = " + expr + "; }");
  if (!f.ok)
    return f.diags();
  auto *assign =
      ast::dyn_cast<ast::AssignVar>(f.ctx->root->probes.back()->body->stmts[0]);
  return ast::type_str(assign->value->type);
}

TEST(Builtins, HostTypes) {
  EXPECT_EQ(type_in("BEGIN", "pid"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "tid"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "uid"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "gid"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "cpu"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "comm"), "string[16]");
  EXPECT_EQ(type_in("BEGIN", "nsecs"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "elapsed"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "rand"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "cgroup"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "cpid"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "numaid"), "uint32");
  EXPECT_EQ(type_in("BEGIN", "jiffies"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "ncpus"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "curtask"), "uint64");
  EXPECT_EQ(type_in("BEGIN", "usermode"), "uint8");
  EXPECT_EQ(type_in("BEGIN", "username"), "username");
  EXPECT_EQ(type_in("BEGIN", "probe"), "probe");
  EXPECT_EQ(type_in("BEGIN", "ustack"), "ustack");
  EXPECT_EQ(type_in("BEGIN", "kstack"), "kstack");
}

TEST(Builtins, UprobeArguments) {
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "arg0"), "int64");
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "arg5"), "int64");
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "arg12"), "int64");
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "sarg0"), "int64");
  EXPECT_EQ(type_in("usdt:/bin/x:p:n", "arg3"), "int64");
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "func"), "usym_t");
  EXPECT_EQ(type_in("uretprobe:/bin/x:f", "retval"), "int64");
  EXPECT_EQ(type_in("uretprobe:/bin/x:f", "func"), "usym_t");
}

TEST(Builtins, GpuTypes) {
  EXPECT_EQ(type_in("kernel:./app:k", "threadIdx"),
            "record { .x = uint32, .y = uint32, .z = uint32 }");
  EXPECT_EQ(type_in("kernel:./app:k", "blockIdx.y"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "blockDim.z"), "uint32");
  EXPECT_EQ(type_in("kernelret:./app:k", "gridDim.x"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "smid"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "warpid"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "laneid"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "arg2"), "int64");
  EXPECT_EQ(type_in("kernel:./app:k", "func"), "usym_t");
  EXPECT_EQ(type_in("kernel:./app:k", "nsecs"), "uint64");
  EXPECT_EQ(type_in("kernel:./app:k", "pid"), "uint32");
  EXPECT_EQ(type_in("kernel:./app:k", "comm"), "string[16]");
}

// args comes from DWARF through ASTContext::debug_types (the CLI's;
// tests/runtime/dwarf.test); without a reader it is a located error.
TEST(Builtins, ArgsNeedsDebugTypes) {
  EXPECT_EQ(
      type_in("uprobe:/bin/x:f", "args"),
      R"(stdin:1:24-28: ERROR: args needs the traced function's DWARF argument types, which cannot be read here; use arg0..argN
uprobe:/bin/x:f { $x = args; }
                       ~~~~
)");
}

TEST(Builtins, ArgumentNamesArePatterns) {
  EXPECT_EQ(type_in("uprobe:/bin/x:f", "arg01"),
            R"(stdin:1:24-29: ERROR: Unknown identifier: 'arg01'
uprobe:/bin/x:f { $x = arg01; }
                       ~~~~~
HINT: Did you mean 'arg0'?
)");
  EXPECT_EQ(ast::builtin_arg_index("arg0", "arg"), 0);
  EXPECT_EQ(ast::builtin_arg_index("arg17", "arg"), 17);
  EXPECT_EQ(ast::builtin_arg_index("sarg3", "sarg"), 3);
  EXPECT_EQ(ast::builtin_arg_index("arg", "arg"), -1);
  EXPECT_EQ(ast::builtin_arg_index("argx", "arg"), -1);
  EXPECT_EQ(ast::builtin_arg_index("arg01", "arg"), -1);
  EXPECT_TRUE(ast::is_builtin_name("threadIdx"));
  EXPECT_FALSE(ast::is_builtin_name("threadidx"));
}

// A builtin used where it has no meaning: one error naming the probe types.
struct Misplaced {
  const char *probe;
  const char *builtin;
  const char *kinds;
};

class MisplacedBuiltin : public ::testing::TestWithParam<Misplaced> {};

TEST_P(MisplacedBuiltin, IsAnError) {
  const Misplaced &m = GetParam();
  std::string probe = m.probe, builtin = m.builtin;
  std::string src = probe + " { $x = " + builtin + "; }";
  size_t col = probe.size() + 9;
  EXPECT_EQ(diagnostics(src),
            "stdin:1:" + std::to_string(col) + "-" +
                std::to_string(col + builtin.size()) + ": ERROR: The " +
                builtin + " builtin can not be used in " + m.kinds +
                " probes\n" + src + "\n" + std::string(col - 1, ' ') +
                std::string(builtin.size(), '~') + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    Builtins, MisplacedBuiltin,
    ::testing::Values(Misplaced{"BEGIN", "arg0", "'begin'"},
                      Misplaced{"END", "sarg1", "'end'"},
                      Misplaced{"BEGIN", "retval", "'begin'"},
                      Misplaced{"interval:s:1", "func", "'interval'"},
                      Misplaced{"uprobe:/bin/x:f", "retval", "'uprobe'"},
                      Misplaced{"usdt:/bin/x:p:n", "retval", "'usdt'"},
                      Misplaced{"uretprobe:/bin/x:f", "arg0", "'uretprobe'"},
                      Misplaced{"uretprobe:/bin/x:f", "sarg0", "'uretprobe'"},
                      Misplaced{"BEGIN", "threadIdx", "'begin'"},
                      Misplaced{"uprobe:/bin/x:f", "blockIdx", "'uprobe'"},
                      Misplaced{"END", "smid", "'end'"},
                      Misplaced{"uretprobe:/bin/x:f", "laneid", "'uretprobe'"},
                      Misplaced{"kernel:./a:k", "tid", "'kernel'"},
                      Misplaced{"kernel:./a:k", "uid", "'kernel'"},
                      Misplaced{"kernel:./a:k", "cpu", "'kernel'"},
                      Misplaced{"kernel:./a:k", "rand", "'kernel'"},
                      Misplaced{"kernel:./a:k", "ustack", "'kernel'"},
                      Misplaced{"kernel:./a:k", "kstack", "'kernel'"},
                      Misplaced{"kernel:./a:k", "retval", "'kernel'"},
                      Misplaced{"kernel:./a:k", "sarg0", "'kernel'"},
                      Misplaced{"kernelret:./a:k", "retval", "'kernelret'"},
                      Misplaced{"kernelret:./a:k", "curtask", "'kernelret'"},
                      Misplaced{"kernel:./a:k", "username", "'kernel'"},
                      Misplaced{"uprobe:/bin/x:f, uretprobe:/bin/x:g", "arg0",
                                "'uprobe', 'uretprobe'"},
                      Misplaced{"uprobe:/bin/x:f, uretprobe:/bin/x:g", "retval",
                                "'uprobe', 'uretprobe'"}));

TEST(Builtins, AllowedEverywhereTheyMeanSomething) {
  for (const char *probe : {"BEGIN", "END", "interval:s:1", "uprobe:/bin/x:f",
                            "uretprobe:/bin/x:f", "usdt:/bin/x:p:n"})
    for (const char *b : {"pid", "tid", "uid", "gid", "cpu", "comm", "nsecs",
                          "elapsed", "probe", "rand", "cgroup", "ncpus",
                          "ustack", "kstack", "username", "curtask"})
      EXPECT_EQ(diagnostics(std::string(probe) + " { $x = " + b + "; }"), "")
          << probe << " " << b;
  for (const char *probe : {"kernel:./a:k", "kernelret:./a:k"})
    for (const char *b : {"pid", "comm", "nsecs", "elapsed", "probe", "func",
                          "arg0", "threadIdx", "blockIdx", "blockDim",
                          "gridDim", "smid", "warpid", "laneid", "ncpus"})
      EXPECT_EQ(diagnostics(std::string(probe) + " { $x = " + b + "; }"), "")
          << probe << " " << b;
}

TEST(Builtins, AProbeCannotMixGpuAndHostAttachPoints) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f, kernel:./a:k { }"),
      R"(stdin:1:1-30: ERROR: a probe can not mix GPU (kernel, kernelret) and host attach points
uprobe:/bin/x:f, kernel:./a:k { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(Builtins, UnknownIdentifiers) {
  EXPECT_EQ(diagnostics("BEGIN { $x = cmm; $y = nothing_like_it; }"),
            R"(stdin:1:14-17: ERROR: Unknown identifier: 'cmm'
BEGIN { $x = cmm; $y = nothing_like_it; }
             ~~~
HINT: Did you mean 'comm'?
stdin:1:24-39: ERROR: Unknown identifier: 'nothing_like_it'
BEGIN { $x = cmm; $y = nothing_like_it; }
                       ~~~~~~~~~~~~~~~
)");
}

TEST(Builtins, StackModesAndClocksAreArgumentsOnly) {
  EXPECT_EQ(
      typed_body("print(ustack(perf)); print(nsecs(boot));", "uprobe:/bin/x:f"),
      R"(call: print :: [void]
 call: ustack :: [ustack]
  identifier: perf :: [stack_mode]
call: print :: [void]
 call: nsecs :: [uint64]
  identifier: boot :: [timestamp_mode]
)");
}

TEST(Builtins, PositionalParameters) {
  RunOptions o;
  o.positional = {"42", "hello", "0x10"};
  EXPECT_EQ(
      typed_body("print(($1, $2, $3, $4, $#)); print(str($1));", "BEGIN", o),
      R"(call: print :: [void]
 tuple: :: [(int64,string[6],int64,int64,int64)]
  param: $1 :: [int64]
  param: $2 :: [string[6]]
  param: $3 :: [int64]
  param: $4 :: [int64]
  param: $# :: [int64]
call: print :: [void]
 call: str :: [string[3]]
  param: $1 :: [string[3]]
)");
  EXPECT_EQ(diagnostics("BEGIN { print($0); }"),
            R"(stdin:1:15-17: ERROR: positional parameters start at $1
BEGIN { print($0); }
              ~~
)");
}

} // namespace
} // namespace ubtrace::test
