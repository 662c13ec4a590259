// The config pass: known variables (by their script name, or as BPFTRACE_
// or UBTRACE_ environment names), values of the right kind, stored typed
// into ctx.config; and the table of variables (runtime/config).
#include "ast/passes/config.h"
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

runtime::Config config_of(const std::string &block) {
  Frontend f = analyse(block + " BEGIN { }", RunOptions{{}, false, "config"});
  EXPECT_TRUE(f.ok) << f.diags();
  return f.ctx->config;
}

TEST(ConfigPass, ValuesOfEachKind) {
  auto c = config_of("config = { max_strlen = 128; stack_mode = perf; "
                     "print_maps_on_exit = false; license = \"Dual MIT/GPL\"; "
                     "max_map_keys = 0x100 }");
  EXPECT_EQ(c.max_strlen, 128u);
  EXPECT_EQ(c.stack_mode, runtime::StackMode::Perf);
  EXPECT_FALSE(c.print_maps_on_exit);
  EXPECT_EQ(c.license, runtime::License::DualMitGpl);
  EXPECT_EQ(c.max_map_keys, 256u);
  // The rest keep their defaults.
  runtime::Config expected;
  expected.max_strlen = 128;
  expected.stack_mode = runtime::StackMode::Perf;
  expected.print_maps_on_exit = false;
  expected.license = runtime::License::DualMitGpl;
  expected.max_map_keys = 256;
  EXPECT_EQ(c, expected);
}

TEST(ConfigPass, EnvironmentStyleNames) {
  auto c = config_of("config = { BPFTRACE_MAX_STRLEN = 10; "
                     "UBTRACE_STACK_MODE = raw; MAX_CAT_BYTES = 7 }");
  EXPECT_EQ(c.max_strlen, 10u);
  EXPECT_EQ(c.stack_mode, runtime::StackMode::Raw);
  EXPECT_EQ(c.max_cat_bytes, 7u);
}

TEST(ConfigPass, BooleansAndChoicesNormalise) {
  auto c = config_of("config = { cpp_demangle = 0; lazy_symbolication = TRUE; "
                     "show_debug_info = 1; cache_user_symbols = per_program; "
                     "missing_probes = \"Warn\" }");
  EXPECT_FALSE(c.cpp_demangle);
  EXPECT_TRUE(c.lazy_symbolication);
  EXPECT_TRUE(c.show_debug_info);
  EXPECT_EQ(c.cache_user_symbols, runtime::SymbolCache::PerProgram);
  EXPECT_EQ(c.missing_probes, runtime::MissingProbes::Warn);
}

TEST(ConfigPass, EmptyBlockLeavesTheDefaults) {
  runtime::Config c = config_of("config = { }");
  EXPECT_EQ(c, runtime::Config{});
  EXPECT_EQ(c.max_strlen, 64u);
  EXPECT_EQ(c.max_map_keys, 4096u);
  EXPECT_EQ(c.stack_mode, runtime::StackMode::Bpftrace);
  EXPECT_TRUE(c.print_maps_on_exit);
  EXPECT_EQ(c.str_trunc_trailer, "..");
  EXPECT_EQ(c.unstable_tseries, runtime::FeatureFlag::Warn);
}

TEST(ConfigPass, UnknownVariables) {
  EXPECT_EQ(diagnostics("config = { nope = 1; max_strln = 2 } BEGIN { }"),
            R"(stdin:1:12-20: ERROR: nope: not a known configuration option
config = { nope = 1; max_strln = 2 } BEGIN { }
           ~~~~~~~~
stdin:1:22-35: ERROR: max_strln: not a known configuration option
config = { nope = 1; max_strln = 2 } BEGIN { }
                     ~~~~~~~~~~~~~
HINT: Did you mean 'max_strlen'?
)");
}

TEST(ConfigPass, ValuesOfTheWrongKind) {
  EXPECT_EQ(
      diagnostics("config = {\n  max_strlen = -1;\n  stack_mode = fast;\n"
                  "  print_maps_on_exit = 2;\n  max_probes = \"x\";\n"
                  "  cpp_demangle = yes\n}\nBEGIN { }"),
      R"(stdin:2:16-18: ERROR: max_strlen expects a non-negative integer in [1, 65536], got '-1'
  max_strlen = -1;
               ~~
stdin:3:16-20: ERROR: Invalid value for stack_mode. Found: fast. Valid values: bpftrace, perf, raw, build_id
  stack_mode = fast;
               ~~~~
stdin:4:24-25: ERROR: print_maps_on_exit expects true or false (or 1 or 0), got '2'
  print_maps_on_exit = 2;
                       ~
stdin:5:16-19: ERROR: max_probes expects a non-negative integer in [1, 4294967295], got 'x'
  max_probes = "x";
               ~~~
stdin:6:18-21: ERROR: cpp_demangle expects true or false (or 1 or 0), got 'yes'
  cpp_demangle = yes
                 ~~~
)");
}

TEST(ConfigPass, ValuesMustBeLiterals) {
  EXPECT_EQ(
      diagnostics("config = { max_strlen = 1 + 2 } BEGIN { }"),
      R"(stdin:1:25-30: ERROR: config values must be literals or identifiers
config = { max_strlen = 1 + 2 } BEGIN { }
                        ~~~~~
)");
  EXPECT_EQ(
      diagnostics("config = { max_strlen = $1 } BEGIN { }"),
      R"(stdin:1:25-27: ERROR: config values must be literals or identifiers
config = { max_strlen = $1 } BEGIN { }
                        ~~
)");
}

TEST(ConfigPass, DuplicatesWarnAndTheLastWins) {
  Frontend f = analyse("config = { max_strlen = 5; max_strlen = 6 } BEGIN { }");
  EXPECT_TRUE(f.ok);
  EXPECT_EQ(f.diags(),
            R"(stdin:1:28-42: WARNING: duplicate config variable: max_strlen
config = { max_strlen = 5; max_strlen = 6 } BEGIN { }
                           ~~~~~~~~~~~~~~
)");
  EXPECT_EQ(f.ctx->config.max_strlen, 6u);
}

TEST(ConfigPass, MaxStrlenSizesStrings) {
  EXPECT_EQ(typed_body("$s = str(arg0); $t = (string)\"abc\";",
                       "config = { max_strlen = 16 } uprobe:/bin/x:f"),
            R"(=
 variable: $s :: [string[16]]
 call: str :: [string[16]]
  identifier: arg0 :: [int64]
=
 variable: $t :: [string[16]]
 (string) :: [string[16]]
  string: abc :: [string[4]]
)");
}

TEST(ConfigTable, Lookup) {
  EXPECT_EQ(runtime::canonical_config_name("BPFTRACE_MAX_STRLEN"),
            "max_strlen");
  EXPECT_EQ(runtime::canonical_config_name("UBTRACE_STACK_MODE"), "stack_mode");
  EXPECT_EQ(runtime::canonical_config_name("Log_Size"), "log_size");
  ASSERT_NE(runtime::find_config_var("max_strlen"), nullptr);
  EXPECT_EQ(runtime::find_config_var("max_strlen")->default_text, "64");
  EXPECT_EQ(runtime::find_config_var("nope"), nullptr);
  std::string norm, err;
  const runtime::ConfigVar *mode = runtime::find_config_var("stack_mode");
  EXPECT_TRUE(runtime::check_config_value(*mode, "PERF", norm, err));
  EXPECT_EQ(norm, "perf");
  EXPECT_FALSE(runtime::check_config_value(*mode, "x", norm, err));
  EXPECT_EQ(err, "Invalid value for stack_mode. Found: x. Valid values: "
                 "bpftrace, perf, raw, build_id");
  const runtime::ConfigVar *n = runtime::find_config_var("perf_rb_pages");
  EXPECT_FALSE(runtime::check_config_value(*n, "", norm, err));
  EXPECT_EQ(
      err,
      "perf_rb_pages expects a non-negative integer in [1, 65536], got ''");
}

// Each variable's default text (what --info and the manual print) is the
// value its field starts with, and storing that text changes nothing.
TEST(ConfigTable, DefaultsAreTheFieldsDefaults) {
  const runtime::Config defaults;
  size_t n = 0;
  for (const auto &v : runtime::config_vars()) {
    n++;
    runtime::Config c;
    c.max_strlen = 1; // something to see written back
    c.str_trunc_trailer = "x";
    std::string err;
    ASSERT_TRUE(runtime::set_config_value(c, v, v.default_text, err))
        << v.name << ": " << err;
    runtime::Config expected;
    expected.max_strlen = v.name == "max_strlen" ? defaults.max_strlen : 1;
    expected.str_trunc_trailer =
        v.name == "str_trunc_trailer" ? defaults.str_trunc_trailer : "x";
    EXPECT_EQ(c, expected) << v.name;
    EXPECT_FALSE(v.doc.empty()) << v.name;
  }
  EXPECT_EQ(n, 24u);
}

// A license the kernel would not count as GPL-compatible is refused, with
// the values it could be.
TEST(ConfigPass, LicenseIsOneOfTheKnown) {
  std::string d = diagnostics("config={license=\"Potato\"} BEGIN {}");
  EXPECT_NE(d.find("ERROR: Invalid value for license. Found: "
                   "Potato. Valid values: Dual MIT/GPL, Dual "
                   "BSD/GPL, Dual MPL/GPL, GPL and additional "
                   "rights, GPL v2, GPL"),
            std::string::npos)
      << d;
  EXPECT_EQ(config_of("config={license=\"Dual BSD/GPL\"}").license,
            runtime::License::DualBsdGpl);
}

// Every value of a choice stores as its own enumerator, in any case.
TEST(ConfigTable, ChoicesStoreTyped) {
  runtime::Config c;
  std::string err;
  const auto *v = runtime::find_config_var("cache_user_symbols");
  ASSERT_TRUE(runtime::set_config_value(c, *v, "none", err));
  EXPECT_EQ(c.cache_user_symbols, runtime::SymbolCache::None);
  ASSERT_TRUE(runtime::set_config_value(c, *v, "Per_Program", err));
  EXPECT_EQ(c.cache_user_symbols, runtime::SymbolCache::PerProgram);
  EXPECT_EQ(runtime::config_spelling(c.cache_user_symbols), "PER_PROGRAM");
  v = runtime::find_config_var("unstable_import");
  ASSERT_TRUE(runtime::set_config_value(c, *v, "ERROR", err));
  EXPECT_EQ(c.unstable_import, runtime::FeatureFlag::Error);
  EXPECT_EQ(c.unstable_macro, runtime::FeatureFlag::Enable);
  v = runtime::find_config_var("max_map_keys");
  ASSERT_TRUE(runtime::set_config_value(c, *v, "1073741824", err));
  EXPECT_EQ(c.max_map_keys, 1073741824u);
  EXPECT_FALSE(runtime::set_config_value(c, *v, "1073741825", err));
  EXPECT_EQ(c.max_map_keys, 1073741824u); // a bad value stores nothing
}

} // namespace
} // namespace ubtrace::test
