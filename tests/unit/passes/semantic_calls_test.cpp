// Semantic analysis of function calls: each function's arity, argument
// kinds and types, where it may run (host, GPU, kernel-only, unsafe), and
// that a failed call does not cascade into more errors.
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

TEST(Calls, UnknownFunction) {
  EXPECT_EQ(diagnostics("BEGIN { fooo(); }"),
            R"BT(stdin:1:9-13: ERROR: Unknown function: 'fooo'
BEGIN { fooo(); }
        ~~~~
)BT");
}

TEST(Calls, UnknownFunctionWithHint) {
  EXPECT_EQ(diagnostics("BEGIN { prnt(1); }"),
            R"BT(stdin:1:9-13: ERROR: Unknown function: 'prnt'
BEGIN { prnt(1); }
        ~~~~
HINT: Did you mean 'print'?
)BT");
}

TEST(Calls, CountTakesNoArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = count(1); }"),
      R"BT(stdin:1:14-22: ERROR: count() requires no arguments (1 provided)
BEGIN { @a = count(1); }
             ~~~~~~~~
)BT");
}

TEST(Calls, SumNeedsOneArgument) {
  EXPECT_EQ(diagnostics("BEGIN { @a = sum(); }"),
            R"BT(stdin:1:14-19: ERROR: sum() requires one argument (0 provided)
BEGIN { @a = sum(); }
             ~~~~~
)BT");
}

TEST(Calls, SumOfAString) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = sum(\"a\"); }"),
      R"BT(stdin:1:14-22: ERROR: sum() only supports integer arguments (string provided)
BEGIN { @a = sum("a"); }
             ~~~~~~~~
)BT");
}

TEST(Calls, AvgOfATuple) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = avg((1, 2)); }"),
      R"BT(stdin:1:14-25: ERROR: avg() only supports integer arguments (tuple provided)
BEGIN { @a = avg((1, 2)); }
             ~~~~~~~~~~~
)BT");
}

TEST(Calls, HistBitsRange) {
  EXPECT_EQ(diagnostics("BEGIN { @a = hist(1, 6); }"),
            R"BT(stdin:1:22-23: ERROR: hist: bits 6 must be 0..5
BEGIN { @a = hist(1, 6); }
                     ~
)BT");
}

TEST(Calls, HistBitsMustBeLiteral) {
  EXPECT_EQ(diagnostics("BEGIN { $b = 2; @a = hist(1, $b); }"),
            R"BT(stdin:1:30-32: ERROR: hist() expects an integer literal
BEGIN { $b = 2; @a = hist(1, $b); }
                             ~~
)BT");
}

TEST(Calls, LhistArity) {
  EXPECT_EQ(diagnostics("BEGIN { @a = lhist(1, 0, 10); }"),
            R"BT(stdin:1:14-29: ERROR: lhist() requires 4 arguments (3 provided)
BEGIN { @a = lhist(1, 0, 10); }
             ~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, LhistMaxAboveMin) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = lhist(1, 10, 0, 1); }"),
      R"BT(stdin:1:14-32: ERROR: lhist() max must be greater than min (10, 0 provided)
BEGIN { @a = lhist(1, 10, 0, 1); }
             ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, LhistStep) {
  EXPECT_EQ(diagnostics("BEGIN { @a = lhist(1, 0, 10, 0); }"),
            R"BT(stdin:1:30-31: ERROR: lhist() step must be >= 1 (0 provided)
BEGIN { @a = lhist(1, 0, 10, 0); }
                             ~
)BT");
}

TEST(Calls, LhistTooManyBuckets) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a = lhist(1, 0, 10000, 1); }"),
      R"BT(stdin:1:14-35: ERROR: lhist() too many buckets, must be <= 1000 (would need 10000)
BEGIN { @a = lhist(1, 0, 10000, 1); }
             ~~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, AggregationMustBeAssignedToAMap) {
  EXPECT_EQ(
      diagnostics("BEGIN { count(); }"),
      R"BT(stdin:1:9-16: ERROR: count() should be directly assigned to a map
BEGIN { count(); }
        ~~~~~~~
)BT");
}

TEST(Calls, AggregationInAVariable) {
  EXPECT_EQ(
      diagnostics("BEGIN { $x = count(); }"),
      R"BT(stdin:1:14-21: ERROR: count() should be directly assigned to a map
BEGIN { $x = count(); }
             ~~~~~~~
)BT");
}

TEST(Calls, AggregationInAnExpression) {
  EXPECT_EQ(
      diagnostics("BEGIN { @x = 1 + count(); }"),
      R"BT(stdin:1:18-25: ERROR: count() should be directly assigned to a map
BEGIN { @x = 1 + count(); }
                 ~~~~~~~
)BT");
}

TEST(Calls, AggregationInAKey) {
  EXPECT_EQ(
      diagnostics("BEGIN { @x[count()] = 1; }"),
      R"BT(stdin:1:12-19: ERROR: count() should be directly assigned to a map
BEGIN { @x[count()] = 1; }
           ~~~~~~~
)BT");
}

TEST(Calls, PrintNoArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(); }"),
      R"BT(stdin:1:9-16: ERROR: print() requires at least 1 argument (0 provided)
BEGIN { print(); }
        ~~~~~~~
)BT");
}

TEST(Calls, PrintNonMapWithExtraArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(1, 2); }"),
      R"BT(stdin:1:9-20: ERROR: Non-map print() only takes 1 argument, 2 found
BEGIN { print(1, 2); }
        ~~~~~~~~~~~
)BT");
}

TEST(Calls, PrintTooManyArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a[1] = 1; print(@a, 1, 2, 3); }"),
      R"BT(stdin:1:20-38: ERROR: print() takes up to 3 arguments (4 provided)
BEGIN { @a[1] = 1; print(@a, 1, 2, 3); }
                   ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, PrintTopMustBeInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { @a[1] = 1; print(@a, \"top\"); }"),
      R"BT(stdin:1:20-36: ERROR: print() only supports integer arguments (string provided)
BEGIN { @a[1] = 1; print(@a, "top"); }
                   ~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, PrintVoid) {
  EXPECT_EQ(diagnostics("BEGIN { print(print(1)); }"),
            R"BT(stdin:1:9-24: ERROR: print() can not print a value of type void
BEGIN { print(print(1)); }
        ~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, ClearNeedsAMap) {
  EXPECT_EQ(diagnostics("BEGIN { clear(1); }"),
            R"BT(stdin:1:9-17: ERROR: clear() expects a map to be provided
BEGIN { clear(1); }
        ~~~~~~~~
)BT");
}

TEST(Calls, ClearOfAKeyedAccess) {
  EXPECT_EQ(diagnostics("BEGIN { @a[1] = 1; clear(@a[1]); }"),
            R"BT(stdin:1:20-32: ERROR: clear() expects a map to be provided
BEGIN { @a[1] = 1; clear(@a[1]); }
                   ~~~~~~~~~~~~
)BT");
}

TEST(Calls, ZeroArity) {
  EXPECT_EQ(diagnostics("BEGIN { @a = 1; zero(@a, 1); }"),
            R"BT(stdin:1:17-28: ERROR: zero() requires one argument (2 provided)
BEGIN { @a = 1; zero(@a, 1); }
                ~~~~~~~~~~~
)BT");
}

TEST(Calls, ExitWithString) {
  EXPECT_EQ(
      diagnostics("BEGIN { exit(\"a\"); }"),
      R"BT(stdin:1:9-18: ERROR: exit() only supports integer arguments (string provided)
BEGIN { exit("a"); }
        ~~~~~~~~~
)BT");
}

TEST(Calls, ExitArity) {
  EXPECT_EQ(diagnostics("BEGIN { exit(1, 2); }"),
            R"BT(stdin:1:9-19: ERROR: exit() takes up to 1 argument (2 provided)
BEGIN { exit(1, 2); }
        ~~~~~~~~~~
)BT");
}

TEST(Calls, TimeNeedsALiteral) {
  EXPECT_EQ(
      diagnostics("BEGIN { time(1); }"),
      R"BT(stdin:1:9-16: ERROR: time() expects a string literal (integer provided)
BEGIN { time(1); }
        ~~~~~~~
)BT");
}

TEST(Calls, StrftimeArity) {
  EXPECT_EQ(
      diagnostics("BEGIN { $t = strftime(\"%H\"); }"),
      R"BT(stdin:1:14-28: ERROR: strftime() requires 2 arguments (1 provided)
BEGIN { $t = strftime("%H"); }
             ~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, StrftimeFormatLiteral) {
  EXPECT_EQ(diagnostics("BEGIN { $f = \"%H\"; $t = strftime($f, nsecs); }"),
            R"BT(stdin:1:25-44: ERROR: strftime() expects a string literal
BEGIN { $f = "%H"; $t = strftime($f, nsecs); }
                        ~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, StrNegativeLength) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { $s = str(arg0, -1); }"),
            R"BT(stdin:1:34-36: ERROR: str() cannot use negative length (-1)
uprobe:/bin/x:f { $s = str(arg0, -1); }
                                 ~~
)BT");
}

TEST(Calls, StrOfATuple) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $s = str((1, 2)); }"),
      R"BT(stdin:1:24-35: ERROR: str() expects an integer or a pointer type as first argument ((int8,int8) provided)
uprobe:/bin/x:f { $s = str((1, 2)); }
                       ~~~~~~~~~~~
)BT");
}

TEST(Calls, StrLengthMustBeInteger) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $s = str(arg0, \"x\"); }"),
      R"BT(stdin:1:24-38: ERROR: str() only supports integer arguments (string provided)
uprobe:/bin/x:f { $s = str(arg0, "x"); }
                       ~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, BufNeedsALength) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { $b = buf(arg0); }"),
      R"BT(stdin:1:24-33: ERROR: buf() needs a length unless its argument is an array
uprobe:/bin/x:f { $b = buf(arg0); }
                       ~~~~~~~~~
)BT");
}

TEST(Calls, BufNegativeLength) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { $b = buf(arg0, -2); }"),
            R"BT(stdin:1:34-36: ERROR: buf() cannot use negative length (-2)
uprobe:/bin/x:f { $b = buf(arg0, -2); }
                                 ~~
)BT");
}

TEST(Calls, JoinSeparatorLiteral) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { join(arg0, 1); }"),
      R"BT(stdin:1:19-32: ERROR: join() expects a string literal (integer provided)
uprobe:/bin/x:f { join(arg0, 1); }
                  ~~~~~~~~~~~~~
)BT");
}

TEST(Calls, JoinOfAString) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { join(\"a\"); }"),
      R"BT(stdin:1:19-28: ERROR: join() expects a pointer to an array of strings
uprobe:/bin/x:f { join("a"); }
                  ~~~~~~~~~
)BT");
}

TEST(Calls, StackModeFirst) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { print(ustack(3, perf)); }"),
            R"BT(stdin:1:35-39: ERROR: ustack(): the stack mode comes first
uprobe:/bin/x:f { print(ustack(3, perf)); }
                                  ~~~~
)BT");
}

TEST(Calls, StackLimitRange) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { print(kstack(2000)); }"),
            R"BT(stdin:1:32-36: ERROR: kstack(): the stack limit must be 0..1024
uprobe:/bin/x:f { print(kstack(2000)); }
                               ~~~~
)BT");
}

TEST(Calls, StackLimitLiteral) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { print(ustack(\"x\")); }"),
            R"BT(stdin:1:32-35: ERROR: ustack() expects an integer literal
uprobe:/bin/x:f { print(ustack("x")); }
                               ~~~
)BT");
}

TEST(Calls, UsymOfAString) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { print(usym(\"a\")); }"),
      R"BT(stdin:1:25-34: ERROR: usym() expects an integer or pointer argument
uprobe:/bin/x:f { print(usym("a")); }
                        ~~~~~~~~~
)BT");
}

TEST(Calls, UaddrNeedsALiteral) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { print(uaddr(1)); }"),
      R"BT(stdin:1:25-33: ERROR: uaddr() expects a string literal (integer provided)
uprobe:/bin/x:f { print(uaddr(1)); }
                        ~~~~~~~~
)BT");
}

TEST(Calls, RegUnknown) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { print(reg(\"xyz\")); }"),
            R"BT(stdin:1:25-35: ERROR: 'xyz' is not a valid register
uprobe:/bin/x:f { print(reg("xyz")); }
                        ~~~~~~~~~~
)BT");
}

TEST(Calls, RegWithHint) {
  EXPECT_EQ(diagnostics("uprobe:/bin/x:f { print(reg(\"rsi2\")); }"),
            R"BT(stdin:1:25-36: ERROR: 'rsi2' is not a valid register
uprobe:/bin/x:f { print(reg("rsi2")); }
                        ~~~~~~~~~~~
HINT: Did you mean 'rsi'?
)BT");
}

TEST(Calls, RegInBegin) {
  EXPECT_EQ(diagnostics("BEGIN { print(reg(\"ip\")); }"),
            R"BT(stdin:1:15-24: ERROR: reg() can not be used in 'begin' probes
BEGIN { print(reg("ip")); }
              ~~~~~~~~~
)BT");
}

TEST(Calls, NtopOfAString) {
  EXPECT_EQ(
      diagnostics("uprobe:/bin/x:f { print(ntop(\"x\")); }"),
      R"BT(stdin:1:25-34: ERROR: ntop() expects an integer or array argument, got string[2]
uprobe:/bin/x:f { print(ntop("x")); }
                        ~~~~~~~~~
)BT");
}

TEST(Calls, PtonNeedsALiteral) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(pton(1)); }"),
      R"BT(stdin:1:15-22: ERROR: pton() expects a string literal (integer provided)
BEGIN { print(pton(1)); }
              ~~~~~~~
)BT");
}

TEST(Calls, CgroupidNeedsALiteral) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(cgroupid(1)); }"),
      R"BT(stdin:1:15-26: ERROR: cgroupid() expects a string literal (integer provided)
BEGIN { print(cgroupid(1)); }
              ~~~~~~~~~~~
)BT");
}

TEST(Calls, StrncmpOfIntegers) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(strncmp(1, \"a\", 2)); }"),
      R"BT(stdin:1:15-33: ERROR: strncmp() expects string arguments (integer provided)
BEGIN { print(strncmp(1, "a", 2)); }
              ~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, StrncmpNegativeLength) {
  EXPECT_EQ(diagnostics("BEGIN { print(strncmp(\"a\", \"b\", -1)); }"),
            R"BT(stdin:1:33-35: ERROR: strncmp() length must be >= 0
BEGIN { print(strncmp("a", "b", -1)); }
                                ~~
)BT");
}

TEST(Calls, StrcontainsArity) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(strcontains(\"a\")); }"),
      R"BT(stdin:1:15-31: ERROR: strcontains() requires 2 arguments (1 provided)
BEGIN { print(strcontains("a")); }
              ~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, StrlenOfInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(strlen(1)); }"),
      R"BT(stdin:1:15-24: ERROR: strlen() expects a string argument (integer provided)
BEGIN { print(strlen(1)); }
              ~~~~~~~~~
)BT");
}

TEST(Calls, StrerrorOfString) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(strerror(\"a\")); }"),
      R"BT(stdin:1:15-28: ERROR: strerror() only supports integer arguments (string provided)
BEGIN { print(strerror("a")); }
              ~~~~~~~~~~~~~
)BT");
}

TEST(Calls, BswapOfString) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(bswap(\"a\")); }"),
      R"BT(stdin:1:15-25: ERROR: bswap() only supports integer arguments (string provided)
BEGIN { print(bswap("a")); }
              ~~~~~~~~~~
)BT");
}

TEST(Calls, NsecsClock) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(nsecs(1)); }"),
      R"BT(stdin:1:21-22: ERROR: nsecs() takes a clock: monotonic, boot, tai or sw_tai
BEGIN { print(nsecs(1)); }
                    ~
)BT");
}

TEST(Calls, NsecsWrongClock) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(nsecs(init)); }"),
      R"BT(stdin:1:21-25: ERROR: nsecs() takes a clock: monotonic, boot, tai or sw_tai
BEGIN { print(nsecs(init)); }
                    ~~~~
)BT");
}

TEST(Calls, PidNamespace) {
  EXPECT_EQ(diagnostics("BEGIN { print(pid(boot)); }"),
            R"BT(stdin:1:19-23: ERROR: pid() takes curr_ns or init
BEGIN { print(pid(boot)); }
                  ~~~~
)BT");
}

TEST(Calls, CommTakesNothing) {
  EXPECT_EQ(diagnostics("BEGIN { print(comm(1)); }"),
            R"BT(stdin:1:15-22: ERROR: comm() requires no arguments (1 provided)
BEGIN { print(comm(1)); }
              ~~~~~~~
)BT");
}

TEST(Calls, SignalNeedsUnsafe) {
  EXPECT_EQ(
      diagnostics("BEGIN { signal(9); }"),
      R"BT(stdin:1:9-18: ERROR: signal() is an unsafe function being used in safe mode
BEGIN { signal(9); }
        ~~~~~~~~~
)BT");
}

TEST(Calls, SystemNeedsUnsafe) {
  EXPECT_EQ(
      diagnostics("BEGIN { system(\"ls\"); }"),
      R"BT(stdin:1:9-21: ERROR: system() is an unsafe function being used in safe mode
BEGIN { system("ls"); }
        ~~~~~~~~~~~~
)BT");
}

TEST(Calls, AssertArity) {
  EXPECT_EQ(diagnostics("BEGIN { assert(1); }"),
            R"BT(stdin:1:9-18: ERROR: assert() requires 2 arguments (1 provided)
BEGIN { assert(1); }
        ~~~~~~~~~
)BT");
}

TEST(Calls, StaticAssertFails) {
  EXPECT_EQ(diagnostics("BEGIN { static_assert(0, \"boom\"); }"),
            R"BT(stdin:1:9-33: ERROR: static_assert failed: boom
BEGIN { static_assert(0, "boom"); }
        ~~~~~~~~~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, StaticAssertPasses) {
  EXPECT_EQ(diagnostics("BEGIN { static_assert(1, \"fine\"); }"), "");
}

TEST(Calls, DeleteNoArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { delete(); }"),
      R"BT(stdin:1:9-17: ERROR: delete() requires at least 1 argument (0 provided)
BEGIN { delete(); }
        ~~~~~~~~
)BT");
}

TEST(Calls, DeleteOfAKeyedMapNeedsAKey) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; delete(@m); }"),
      R"BT(stdin:1:20-30: ERROR: delete() of a keyed map needs a key: delete(@m, key) or delete(@m[key])
BEGIN { @m[1] = 1; delete(@m); }
                   ~~~~~~~~~~
)BT");
}

TEST(Calls, DeleteNeedsAMap) {
  EXPECT_EQ(diagnostics("BEGIN { delete(1); }"),
            R"BT(stdin:1:9-18: ERROR: delete() expects a map to be provided
BEGIN { delete(1); }
        ~~~~~~~~~
)BT");
}

TEST(Calls, DeleteTooManyArguments) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; delete(@m, 1, 2); }"),
      R"BT(stdin:1:20-36: ERROR: delete() takes up to 2 arguments (3 provided)
BEGIN { @m[1] = 1; delete(@m, 1, 2); }
                   ~~~~~~~~~~~~~~~~
)BT");
}

TEST(Calls, DeleteKeyOfTheWrongType) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; delete(@m, \"a\"); }"),
      R"BT(stdin:1:27-29: ERROR: Argument mismatch for @m: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'
BEGIN { @m[1] = 1; delete(@m, "a"); }
                          ~~
)BT");
}

TEST(Calls, HasKeyArity) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; $h = has_key(@m); }"),
      R"BT(stdin:1:25-36: ERROR: has_key() requires 2 arguments (1 provided)
BEGIN { @m[1] = 1; $h = has_key(@m); }
                        ~~~~~~~~~~~
)BT");
}

TEST(Calls, HasKeyKeyType) {
  EXPECT_EQ(
      diagnostics("BEGIN { @m[1] = 1; $h = has_key(@m, \"a\"); }"),
      R"BT(stdin:1:33-35: ERROR: Argument mismatch for @m: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'
BEGIN { @m[1] = 1; $h = has_key(@m, "a"); }
                                ~~
)BT");
}

TEST(Calls, LenOfAnInteger) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(len(1)); }"),
      R"BT(stdin:1:15-21: ERROR: len() expects a map or stack to be provided
BEGIN { print(len(1)); }
              ~~~~~~
)BT");
}

TEST(Calls, KernelOnlyFunction) {
  EXPECT_EQ(
      diagnostics("BEGIN { override(1); }"),
      R"BT(stdin:1:9-20: ERROR: override() works on kernel probes only, which ubtrace does not run
BEGIN { override(1); }
        ~~~~~~~~~~~
)BT");
}

TEST(Calls, KernelOnlyPath) {
  EXPECT_EQ(
      diagnostics("BEGIN { print(path(1)); }"),
      R"BT(stdin:1:15-22: ERROR: path() works on kernel probes only, which ubtrace does not run
BEGIN { print(path(1)); }
              ~~~~~~~
)BT");
}

TEST(Calls, GpuCannotRunSystem) {
  EXPECT_EQ(
      diagnostics("kernel:./a:k { system(\"ls\"); }"),
      R"BT(stdin:1:16-28: ERROR: system() can not run on the GPU: it is not available in 'kernel' probes
kernel:./a:k { system("ls"); }
               ~~~~~~~~~~~~
)BT");
}

TEST(Calls, GpuCannotRunUsym) {
  EXPECT_EQ(
      diagnostics("kernel:./a:k { print(usym(1)); }"),
      R"BT(stdin:1:22-29: ERROR: usym() can not run on the GPU: it is not available in 'kernel' probes
kernel:./a:k { print(usym(1)); }
                     ~~~~~~~
)BT");
}

TEST(Calls, GpuCannotRunJoin) {
  EXPECT_EQ(
      diagnostics("kernel:./a:k { join(arg0); }"),
      R"BT(stdin:1:16-26: ERROR: join() can not run on the GPU: it is not available in 'kernel' probes
kernel:./a:k { join(arg0); }
               ~~~~~~~~~~
)BT");
}

TEST(Calls, ErrorsOfACallDoNotCascade) {
  EXPECT_EQ(diagnostics("BEGIN { $c = str(1, -1); print($c); }"),
            R"BT(stdin:1:21-23: ERROR: str() cannot use negative length (-1)
BEGIN { $c = str(1, -1); print($c); }
                    ~~
)BT");
}

TEST(Calls, ValidCallsHaveNoDiagnostics) {
  EXPECT_EQ(diagnostics(R"(uprobe:/bin/x:f {
  @c = count(); @s = sum(arg1); @mn = min(arg1); @mx = max(arg1);
  @a = avg(arg1); @st = stats(arg1); @h = hist(arg1); @h2 = hist(arg1, 2);
  @l = lhist(arg1, 0, 100, 10);
  printf("%d %s\n", pid, comm); print(@c); print(@h2, 5); print(@l, 5, 2);
  $s = str(arg0); $s2 = str(arg0, 8); $b = buf(arg2, 16);
  printf("%r\n", $b);
  $u = usym(arg3); $k = ksym(arg3); $a0 = uaddr("main"); $r = reg("ip");
  $n = ntop(arg4); $n6 = ntop(10, arg4); $p = pton("::1");
  $m = macaddr(arg5); $t = strftime("%H:%M:%S", nsecs);
  $cmp = strncmp($s, "abc", 3); $has = strcontains($s, "x");
  $len = strlen($s); $e = strerror(2); $sw = bswap((uint32)arg1);
  $ns = nsecs(boot); $ps = pid(curr_ns); $ts = tid(init); $cm = comm();
  $us = ustack(perf, 5); $ks = kstack(3);
  time("%H\n"); time();
  join(arg0); join(arg0, ",");
  @m[1] = 1; $d = delete(@m, 1); delete(@m[1]); $hk = has_key(@m, 1);
  clear(@m); zero(@c); $ln = len(@m);
  cat("/proc/%d/status", pid); errorf("e %d", 1); warnf("w");
  debugf("d %s", "x"); assert(1, "ok"); static_assert(1, "ok");
  if (pid) { exit(); } exit(1);
})"),
            "");
}

TEST(Calls, UnsafeFunctionsWithUnsafe) {
  RunOptions o;
  o.unsafe = true;
  EXPECT_EQ(
      diagnostics(
          "BEGIN { system(\"ls %d\", 1); signal(9); signal(\"SIGUSR1\"); }", o),
      "");
}

TEST(Calls, ReturnTypes) {
  EXPECT_EQ(typed_body("$a = str(arg0, 4); $b = buf(arg0, 3); $c = usym(arg0); "
                       "$d = strftime(\"%H\", 1); $e = pton(\"1.2.3.4\"); "
                       "$f = has_key(@m, 1); @m[1] = 1; $g = len(@m); "
                       "$h = strncmp(\"a\", \"b\", 1);",
                       "uprobe:/bin/x:f"),
            R"(=
 variable: $a :: [string[5]]
 call: str :: [string[5]]
  identifier: arg0 :: [int64]
  int: 4 :: [int8]
=
 variable: $b :: [buffer[3]]
 call: buf :: [buffer[3]]
  identifier: arg0 :: [int64]
  int: 3 :: [int8]
=
 variable: $c :: [usym_t]
 call: usym :: [usym_t]
  identifier: arg0 :: [int64]
=
 variable: $d :: [timestamp]
 call: strftime :: [timestamp]
  string: %H :: [string[3]]
  int: 1 :: [int8]
=
 variable: $e :: [uint8[4]]
 call: pton :: [uint8[4]]
  string: 1.2.3.4 :: [string[8]]
=
 variable: $f :: [bool]
 call: has_key :: [bool]
  map: @m :: [int64]
  int: 1 :: [int8]
=
 map: @m :: [int64]
  int: 1 :: [int8]
 int: 1 :: [int8]
=
 variable: $g :: [int64]
 call: len :: [int64]
  map: @m :: [int64]
=
 variable: $h :: [int64]
 call: strncmp :: [int64]
  string: a :: [string[2]]
  string: b :: [string[2]]
  int: 1 :: [int8]
)");
}

} // namespace
} // namespace ubtrace::test
