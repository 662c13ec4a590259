// Every row of ast/builtins.def, compiled in every probe kind its probe set
// allows: a builtin the checker accepts but codegen cannot lower fails
// here, not when a user's script first uses it. A new row needs a use
// below (the test says so when one is missing).
#include "ast/builtins.h"
#include "compile.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

namespace ubtrace {
namespace {

using ast::BuiltinFn;
using ast::BuiltinVar;

// One attach point of each kind a backend runs, with the probe set bit
// the builtin rows use for it.
struct Kind {
  const char *attach;
  unsigned set;
};
const Kind kKinds[] = {
    {"BEGIN", ast::PS_CLI},
    {"interval:s:1", ast::PS_CLI},
    {"uprobe:/bin/true:main", ast::PS_UPROBE},
    {"usdt:/bin/true:prov:name", ast::PS_UPROBE},
    {"uretprobe:/bin/true:main", ast::PS_URETPROBE},
    {"kernel::k", ast::PS_GPU},
    {"kernelret::k", ast::PS_GPU_RET},
};

// A statement using each function. Integer arguments come from nsecs so
// that they are not folded away; map functions get @m, set first.
const std::map<BuiltinFn, std::string> &fn_uses() {
  static const std::map<BuiltinFn, std::string> m = {
      {BuiltinFn::Printf, "printf(\"%d %s\\n\", nsecs, \"x\");"},
      {BuiltinFn::Debugf, "debugf(\"%d\", nsecs);"},
      {BuiltinFn::Errorf, "errorf(\"%d\", nsecs);"},
      {BuiltinFn::Warnf, "warnf(\"%d\", nsecs);"},
      {BuiltinFn::System, "system(\"true %d\", nsecs);"},
      {BuiltinFn::Cat, "cat(\"/dev/null\");"},
      {BuiltinFn::Print, "print(@m); print(nsecs);"},
      {BuiltinFn::Time, "time(\"%H\");"},
      {BuiltinFn::Join, "join(nsecs);"},
      {BuiltinFn::Count, "@c = count();"},
      {BuiltinFn::Sum, "@c = sum(nsecs);"},
      {BuiltinFn::Min, "@c = min(nsecs);"},
      {BuiltinFn::Max, "@c = max(nsecs);"},
      {BuiltinFn::Avg, "@c = avg(nsecs);"},
      {BuiltinFn::Stats, "@c = stats(nsecs);"},
      {BuiltinFn::Hist, "@c = hist(nsecs, 2);"},
      {BuiltinFn::Lhist, "@c = lhist(nsecs, 0, 100, 10);"},
      {BuiltinFn::Tseries, "@ts = tseries(nsecs, 1s, 5, \"max\");"},
      {BuiltinFn::Clear, "clear(@m);"},
      {BuiltinFn::Zero, "zero(@m);"},
      {BuiltinFn::Delete, "delete(@m, 1);"},
      {BuiltinFn::HasKey, "$x = has_key(@m, 1);"},
      {BuiltinFn::Len, "$x = len(@m);"},
      {BuiltinFn::Str, "$x = str(nsecs, 8);"},
      {BuiltinFn::Buf, "$x = buf(nsecs, 8);"},
      {BuiltinFn::Strncmp, "$x = strncmp(\"ab\", \"ac\", 2);"},
      {BuiltinFn::Strcontains, "$x = strcontains(\"abc\", \"b\");"},
      {BuiltinFn::Strlen, "$x = strlen(\"abc\");"},
      {BuiltinFn::Strerror, "$x = strerror(nsecs);"},
      {BuiltinFn::SignalName, "$x = signal_name(nsecs);"},
      {BuiltinFn::SyscallName, "$x = syscall_name(nsecs);"},
      {BuiltinFn::Strftime, "$x = strftime(\"%H\", nsecs);"},
      {BuiltinFn::Ustack, "$x = ustack(perf, 4);"},
      {BuiltinFn::DwUstack, "$x = dw_ustack(perf, 4);"},
      {BuiltinFn::Kstack, "$x = kstack(3);"},
      {BuiltinFn::Usym, "$x = usym(nsecs);"},
      {BuiltinFn::Ksym, "$x = ksym(nsecs);"},
      {BuiltinFn::Uaddr, "$x = uaddr(\"main\");"},
      {BuiltinFn::Reg, "$x = reg(\"ip\");"},
      {BuiltinFn::Kptr, "$x = kptr(nsecs);"},
      {BuiltinFn::Uptr, "$x = uptr(nsecs);"},
      {BuiltinFn::Ntop, "$x = ntop(nsecs);"},
      {BuiltinFn::Pton, "$x = pton(\"127.0.0.1\");"},
      {BuiltinFn::Macaddr, "$x = macaddr(nsecs);"},
      {BuiltinFn::Pid, "$x = pid(curr_ns);"},
      {BuiltinFn::Tid, "$x = tid(init);"},
      {BuiltinFn::Comm, "$x = comm();"},
      {BuiltinFn::Pcomm, "$x = pcomm();"},
      {BuiltinFn::LeaderComm, "$x = leader_comm();"},
      {BuiltinFn::Nsecs, "$x = nsecs(boot);"},
      {BuiltinFn::Cgroupid, "$x = cgroupid(\"/\");"},
      {BuiltinFn::Bswap, "$x = bswap(nsecs);"},
      {BuiltinFn::Signal, "signal(\"SIGUSR1\");"},
      {BuiltinFn::WriteUser, "$x = write_user(reg(\"sp\"), \"hi\", 3);"},
      {BuiltinFn::Exit, "exit(3);"},
      {BuiltinFn::Assert, "assert(nsecs > 0, \"time runs\");"},
      {BuiltinFn::StaticAssert, "static_assert(1, \"one\");"},
  };
  return m;
}

// Variables no codegen lowers yet: the checker refuses each with its
// own message (tested with the semantic pass), so they are not compiled.
bool not_lowered(BuiltinVar v) {
  return v == BuiltinVar::Args;
}

std::string script(const Kind &k, const std::string &use) {
  return std::string(k.attach) + " { @m[1] = 2; " + use + " }";
}

TEST(BuiltinsCoverage, EveryFunctionCompilesWhereItsRowAllowsIt) {
  size_t n = 0;
  const ast::BuiltinFnInfo *rows = ast::builtin_fn_table(n);
  size_t compiled = 0;
  for (size_t i = 0; i < n; i++) {
    const auto &row = rows[i];
    if (row.probes == ast::PS_KERNEL)
      continue; // kernel-side only: refused by name
    auto it = fn_uses().find(row.fn);
    ASSERT_NE(it, fn_uses().end())
        << row.name << "() has no use in builtins_coverage_test.cpp";
    for (const auto &k : kKinds) {
      if (!(row.probes & k.set))
        continue;
      codegen::Output out;
      std::string err;
      std::string src = script(k, it->second);
      EXPECT_TRUE(test::compile(src, out, err, {}, true)) << src << "\n" << err;
      compiled++;
    }
  }
  EXPECT_GT(compiled, n);
}

TEST(BuiltinsCoverage, EveryVariableCompilesWhereItsRowAllowsIt) {
  size_t n = 0;
  const ast::BuiltinVarInfo *rows = ast::builtin_var_table(n);
  for (size_t i = 0; i < n; i++) {
    const auto &row = rows[i];
    if (row.probes == ast::PS_KERNEL || not_lowered(row.var))
      continue;
    std::string name(row.name);
    if (row.var == BuiltinVar::Arg || row.var == BuiltinVar::Sarg)
      name += "7";
    for (const auto &k : kKinds) {
      if (!(row.probes & k.set))
        continue;
      // USDT probes have at most 12 arguments, on the stack or not.
      codegen::Output out;
      std::string err;
      std::string src = script(k, "$x = " + name + ";");
      EXPECT_TRUE(test::compile(src, out, err)) << src << "\n" << err;
    }
  }
}

// The other side: where a row does not allow a builtin, the checker says
// so at the use (never codegen).
TEST(BuiltinsCoverage, EveryFunctionIsRefusedWhereItsRowForbidsIt) {
  size_t n = 0;
  const ast::BuiltinFnInfo *rows = ast::builtin_fn_table(n);
  size_t refused = 0;
  for (size_t i = 0; i < n; i++) {
    const auto &row = rows[i];
    auto it = fn_uses().find(row.fn);
    if (it == fn_uses().end())
      continue;
    for (const auto &k : kKinds) {
      if (row.probes & k.set)
        continue;
      codegen::Output out;
      std::string err;
      std::string src = script(k, it->second);
      EXPECT_FALSE(test::compile(src, out, err, {}, true)) << src;
      EXPECT_NE(err.find(std::string(row.name) + "()"), std::string::npos)
          << src << "\n"
          << err;
      refused++;
    }
  }
  // Host-only functions in the two GPU kinds, reg() and uaddr() in the
  // CLI's: at least those.
  EXPECT_GT(refused, 30u);
}

} // namespace
} // namespace ubtrace
