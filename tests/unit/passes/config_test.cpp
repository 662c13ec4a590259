// The config pass: known settings (by their script name, or as BPFTRACE_ or
// UBTRACE_ environment names), values of the right kind, and the
// normalised values it leaves in ctx.config.
#include "ast/passes/config.h"
#include "tests/unit/parser/frontend_support.h"

#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

std::map<std::string, std::string> config_of(const std::string &block) {
  Frontend f = analyse(block + " BEGIN { }", RunOptions{{}, false, "config"});
  EXPECT_TRUE(f.ok) << f.diags();
  return f.ctx->config;
}

TEST(ConfigPass, ValuesOfEachKind) {
  auto c = config_of("config = { max_strlen = 128; stack_mode = perf; "
                     "print_maps_on_exit = false; license = \"Dual MIT/GPL\"; "
                     "max_map_keys = 0x100 }");
  EXPECT_EQ(c.at("max_strlen"), "128");
  EXPECT_EQ(c.at("stack_mode"), "perf");
  EXPECT_EQ(c.at("print_maps_on_exit"), "false");
  EXPECT_EQ(c.at("license"), "Dual MIT/GPL");
  EXPECT_EQ(c.at("max_map_keys"), "256");
  EXPECT_EQ(c.size(), 5u);
}

TEST(ConfigPass, EnvironmentStyleNames) {
  auto c = config_of("config = { BPFTRACE_MAX_STRLEN = 10; "
                     "UBTRACE_STACK_MODE = raw; MAX_CAT_BYTES = 7 }");
  EXPECT_EQ(c.at("max_strlen"), "10");
  EXPECT_EQ(c.at("stack_mode"), "raw");
  EXPECT_EQ(c.at("max_cat_bytes"), "7");
}

TEST(ConfigPass, BooleansAndChoicesNormalise) {
  auto c = config_of("config = { cpp_demangle = 0; lazy_symbolication = TRUE; "
                     "show_debug_info = 1; cache_user_symbols = per_program; "
                     "missing_probes = \"Warn\" }");
  EXPECT_EQ(c.at("cpp_demangle"), "false");
  EXPECT_EQ(c.at("lazy_symbolication"), "true");
  EXPECT_EQ(c.at("show_debug_info"), "true");
  EXPECT_EQ(c.at("cache_user_symbols"), "PER_PROGRAM");
  EXPECT_EQ(c.at("missing_probes"), "warn");
}

TEST(ConfigPass, EmptyBlock) {
  EXPECT_TRUE(config_of("config = { }").empty());
}

TEST(ConfigPass, UnknownVariables) {
  EXPECT_EQ(diagnostics("config = { nope = 1; max_strln = 2 } BEGIN { }"),
            R"(stdin:1:12-20: ERROR: Unrecognized config variable: nope
config = { nope = 1; max_strln = 2 } BEGIN { }
           ~~~~~~~~
stdin:1:22-35: ERROR: Unrecognized config variable: max_strln
config = { nope = 1; max_strln = 2 } BEGIN { }
                     ~~~~~~~~~~~~~
HINT: Did you mean 'max_strlen'?
)");
}

TEST(ConfigPass, ValuesOfTheWrongKind) {
  EXPECT_EQ(diagnostics("config = {\n  max_strlen = -1;\n  stack_mode = fast;\n"
                        "  print_maps_on_exit = 2;\n  max_probes = \"x\";\n"
                        "  cpp_demangle = yes\n}\nBEGIN { }"),
            R"(stdin:2:16-18: ERROR: max_strlen expects a non-negative integer in [1, 65536], got '-1'
  max_strlen = -1;
               ~~
stdin:3:16-20: ERROR: stack_mode expects one of bpftrace, perf, raw; got 'fast'
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
  EXPECT_EQ(f.ctx->config.at("max_strlen"), "6");
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

TEST(ConfigSettings, Lookup) {
  EXPECT_EQ(ast::canonical_config_name("BPFTRACE_MAX_STRLEN"), "max_strlen");
  EXPECT_EQ(ast::canonical_config_name("UBTRACE_STACK_MODE"), "stack_mode");
  EXPECT_EQ(ast::canonical_config_name("Log_Size"), "log_size");
  ASSERT_NE(ast::find_config_setting("max_strlen"), nullptr);
  EXPECT_EQ(ast::find_config_setting("max_strlen")->default_value, "64");
  EXPECT_EQ(ast::find_config_setting("nope"), nullptr);
  std::string norm, err;
  const ast::ConfigSetting *mode = ast::find_config_setting("stack_mode");
  EXPECT_TRUE(ast::check_config_value(*mode, "PERF", norm, err));
  EXPECT_EQ(norm, "perf");
  EXPECT_FALSE(ast::check_config_value(*mode, "x", norm, err));
  EXPECT_EQ(err, "stack_mode expects one of bpftrace, perf, raw; got 'x'");
  const ast::ConfigSetting *n = ast::find_config_setting("perf_rb_pages");
  EXPECT_FALSE(ast::check_config_value(*n, "", norm, err));
  EXPECT_EQ(err, "perf_rb_pages expects a non-negative integer in [1, 65536], got ''");
}

} // namespace
} // namespace ubtrace::test
