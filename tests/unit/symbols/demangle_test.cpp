#include "runtime/symbols/demangle.h"

#include <gtest/gtest.h>

using namespace ubtrace::runtime::symbols;

TEST(Demangle, MangledNames) {
  EXPECT_TRUE(looks_mangled("_ZN3ubt6Widget3barEi"));
  EXPECT_TRUE(looks_mangled("____Z3fooi_block_invoke"));
  EXPECT_FALSE(looks_mangled("main"));
  EXPECT_FALSE(looks_mangled("_start"));

  EXPECT_EQ(demangle("_ZN3ubt6Widget3barEi"), "ubt::Widget::bar(int)");
  EXPECT_EQ(demangle("_ZN3ubt5twiceIiEET_S1_"), "int ubt::twice<int>(int)");
  EXPECT_EQ(demangle("_ZNK3ubt6Widget3getEv"), "ubt::Widget::get() const");
  EXPECT_EQ(demangle("main"), std::nullopt);
  EXPECT_EQ(demangle("_Zbogus"), std::nullopt);
  EXPECT_EQ(demangle_or_self("_Zbogus"), "_Zbogus");
}

TEST(Demangle, KeepsSymbolVersion) {
  EXPECT_EQ(demangle("_ZNSt9exceptionD2Ev@@GLIBCXX_3.4"),
            "std::exception::~exception()@@GLIBCXX_3.4");
}

TEST(Demangle, StripParameters) {
  EXPECT_EQ(strip_parameters("ubt::Widget::bar(int)"), "ubt::Widget::bar");
  EXPECT_EQ(strip_parameters("ubt::Widget::get() const"), "ubt::Widget::get");
  EXPECT_EQ(strip_parameters("int ubt::twice<int>(int)"),
            "int ubt::twice<int>");
  // A function-pointer parameter nests parentheses.
  EXPECT_EQ(strip_parameters("ns::call(void (*)(int), int)"), "ns::call");
  EXPECT_EQ(strip_parameters("plain"), "plain");
}
