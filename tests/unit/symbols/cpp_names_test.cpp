// C++ attach points: demangled names with and without parameters, against
// the addresses a live C++ program prints.
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/probe_resolver.h"
#include "tests/unit/symbols/test_support.h"

#include <gtest/gtest.h>
#include <set>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::Child;
using ubtrace::symbols_test::parse_addresses;
using ubtrace::symbols_test::prog;

namespace {

class CppNames : public ::testing::Test {
protected:
  void SetUp() override {
    child_ = std::make_unique<Child>(path_);
    ASSERT_TRUE(child_->started());
    printed_ = parse_addresses(child_->read_until_ready());
    auto space = AddressSpace::snapshot(child_->pid());
    ASSERT_TRUE(space);
    space_.emplace(std::move(*space));
  }
  void TearDown() override {
    if (child_)
      child_->finish();
  }

  ubtrace::Result<std::vector<ResolvedProbe>>
  expand(const std::string &function, bool cpp = true) {
    AttachRequest req;
    req.target = path_;
    req.function = function;
    req.cpp = cpp;
    return resolver_.expand(req);
  }
  // The run-time addresses of what `function` expands to.
  std::set<uint64_t> addresses(const std::string &function, bool cpp = true) {
    std::set<uint64_t> out;
    auto probes = expand(function, cpp);
    EXPECT_TRUE(probes) << function << ": " << (probes ? "" : probes.error());
    if (probes)
      for (const auto &p : *probes)
        out.insert(*space_->runtime_address(path_, p.file_offset));
    return out;
  }
  uint64_t at(const std::string &tag) {
    EXPECT_TRUE(printed_.count(tag)) << tag;
    return printed_[tag];
  }

  const std::string path_ = prog("symtest_cpp");
  std::unique_ptr<Child> child_;
  std::map<std::string, uint64_t> printed_;
  std::optional<AddressSpace> space_;
  ProbeResolver resolver_;
};

} // namespace

TEST_F(CppNames, OverloadsByNameWithoutParameters) {
  EXPECT_EQ(addresses("ubt::Widget::bar"),
            (std::set{at("Widget::bar(int)"), at("Widget::bar(double)")}));
  EXPECT_EQ(addresses("ubt::over"),
            (std::set{at("over(int)"), at("over(const_char*)")}));
  EXPECT_EQ(addresses("ubt::Widget::baz"), std::set{at("Widget::baz")});
  EXPECT_EQ(addresses("ubt::inner::deep"), std::set{at("inner::deep")});
}

TEST_F(CppNames, ParametersSelectOneOverload) {
  EXPECT_EQ(addresses("ubt::over(int)"), std::set{at("over(int)")});
  EXPECT_EQ(addresses("ubt::Widget::bar(double)"),
            std::set{at("Widget::bar(double)")});
}

TEST_F(CppNames, Wildcards) {
  EXPECT_EQ(addresses("ubt::inner::*"), std::set{at("inner::deep")});
  EXPECT_EQ(addresses("ubt::Widget::*"),
            (std::set{at("Widget::bar(int)"), at("Widget::bar(double)"),
                      at("Widget::baz")}));
}

TEST_F(CppNames, TemplatesKeepTheirReturnTypeLikeBpftrace) {
  // "int ubt::twice<int>(int)" without parameters is "int ubt::twice<int>".
  EXPECT_FALSE(expand("ubt::twice<int>"));
  EXPECT_EQ(addresses("int ubt::twice<int>"), std::set{at("twice<int>")});
  EXPECT_EQ(addresses("*ubt::twice<*>"),
            (std::set{at("twice<int>"), at("twice<double>")}));
}

TEST_F(CppNames, MangledNamesMatchWithoutCpp) {
  EXPECT_EQ(addresses("_ZN3ubt4overEi", false), std::set{at("over(int)")});
  // Without :cpp, a demangled name matches nothing (as in bpftrace).
  EXPECT_FALSE(expand("ubt::over", false));
}

TEST_F(CppNames, ProbeNamesKeepTheMangledSymbol) {
  auto probes = expand("ubt::over(int)");
  ASSERT_TRUE(probes);
  ASSERT_EQ(probes->size(), 1u);
  EXPECT_EQ((*probes)[0].function, "_ZN3ubt4overEi");
  EXPECT_EQ((*probes)[0].name, "uprobe:" + path_ + ":cpp:_ZN3ubt4overEi");
}

TEST_F(CppNames, Listing) {
  auto lines = resolver_.list("uprobe:" + path_ + ":cpp:ubt::over*");
  ASSERT_TRUE(lines) << lines.error();
  EXPECT_EQ(*lines, (std::vector<std::string>{
                        "uprobe:" + path_ + ":cpp:\"ubt::over(char const*)\"",
                        "uprobe:" + path_ + ":cpp:\"ubt::over(int)\""}));
}
