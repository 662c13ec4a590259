// Rust names (rust_demangle.h): fixed cases, then every symbol of Rust
// programs built here with both manglings against binutils' c++filt,
// which demangles Rust too (its output keeps crate disambiguators and
// hashes, which ours, like rustc's alternate form, leaves out).
#include "runtime/symbols/demangle.h"
#include "runtime/symbols/rust_demangle.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ubtrace::runtime::symbols;

TEST(RustDemangle, V0Paths) {
  EXPECT_EQ(demangle_rust("_RNvCs7NAv3frp1Oz_10hello_rust4fun1"),
            "hello_rust::fun1");
  // An inherent impl and generic arguments.
  EXPECT_EQ(demangle_rust("_RINvMNtNtCsgEmfK2I1SDS_4core3fmt2rtNtB3_"
                          "8Argument11new_displayxECs7NAv3frp1Oz_10hello_rust"),
            "<core::fmt::rt::Argument>::new_display::<i64>");
  // A backref into a slice type, a reference type argument.
  EXPECT_EQ(demangle_rust("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_"
                          "matchesReECsgY6Mt91CT9J_14rustc_demangle"),
            "<str>::trim_start_matches::<&str>");
  // An LLVM suffix goes; garbage is not demangled.
  EXPECT_EQ(demangle_rust("_RNvCs7NAv3frp1Oz_10hello_rust4fun1.llvm.123"),
            "hello_rust::fun1");
  EXPECT_EQ(demangle_rust("_RNvCs7NAv3frp1Oz_10hello_rust99fun1"),
            std::nullopt);
  EXPECT_EQ(demangle_rust("_RB_"), std::nullopt); // a backref to itself
  // Non-ASCII identifiers are punycode ('_' before the deltas), decoded to
  // UTF-8 (rustc 1.8x's names; c++filt reads them the same).
  EXPECT_EQ(demangle_rust("_RNvCsjGcoDi6Dqao_2puu9gre_6ka8i"),
            "pu::gr\u00f6\u00dfe");
  EXPECT_EQ(demangle_rust("_RNvNtCsjGcoDi6Dqao_2puu7caf_dmau10nave__dtar"),
            "pu::caf\u00e9::na\u00efve_\u00f1");
  // Deltas that are not punycode digits stay as given.
  EXPECT_EQ(demangle_rust("_RNvCsjGcoDi6Dqao_2puu5gr_A9"),
            "pu::punycode{gr_A9}");
}

TEST(RustDemangle, LegacyNames) {
  EXPECT_EQ(demangle_rust("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place");
  EXPECT_EQ(
      demangle_rust("_ZN5alloc3vec12Vec$LT$T$GT$4push17h0123456789abcdefE"),
      "alloc::vec::Vec<T>::push");
  EXPECT_EQ(demangle_rust("_ZN4core3fmt3num52_$LT$impl$u20$core..fmt..Debug$u2"
                          "0$for$u20$usize$GT$3fmt17h0123456789abcdefE"),
            "core::fmt::num::<impl core::fmt::Debug for usize>::fmt");
  // C++ names are not Rust's: no hash at the end.
  EXPECT_EQ(demangle_rust("_ZN5outer5inner6helperEi"), std::nullopt);
  EXPECT_EQ(demangle_rust("_ZN3foo3barE"), std::nullopt);
  // demangle_or_self tries Rust first, then C++.
  EXPECT_EQ(demangle_or_self("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place");
  EXPECT_EQ(demangle_or_self("_ZN3ubt6Widget3barEi"), "ubt::Widget::bar(int)");
}

namespace {

std::string run(const std::string &cmd) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

} // namespace

// Builds a Rust program (closures, generics, trait objects, impls) with
// v0 and with the default mangling (legacy names for its own code) and
// compares every Rust symbol with c++filt's
// reading of it. Skips without rustc.
TEST(RustDemangle, AgreesWithCxxfiltOnRustPrograms) {
  if (run("command -v rustc").empty() || run("command -v c++filt").empty())
    GTEST_SKIP() << "rustc or c++filt is not installed";
  char dir[] = "/tmp/ubt-rust-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir;
  std::ofstream(d + "/names.rs") << R"(
use std::collections::HashMap;
trait Shape { fn area(&self) -> f64; }
struct Square(f64);
impl Shape for Square { fn area(&self) -> f64 { self.0 * self.0 } }
#[inline(never)] fn total(shapes: &[Box<dyn Shape>]) -> f64 {
    shapes.iter().map(|s| s.area()).sum()
}
#[inline(never)] fn pick<T: Clone, const N: usize>(a: [T; N]) -> T { a[0].clone() }
fn main() {
    let v: Vec<Box<dyn Shape>> = vec![Box::new(Square(2.0))];
    let mut m = HashMap::new();
    m.insert("k", total(&v));
    println!("{:?} {}", m, pick([1u8, 2, 3]));
}
)";
  size_t compared = 0, equal = 0;
  std::regex hashes(R"(\[[0-9a-f]{16}\]|::h[0-9a-f]{16}$)");
  for (const char *scheme : {"v0", "legacy"}) {
    std::string bin = d + "/names_" + scheme;
    // Stable rustc's default mangles the program's own names the legacy
    // way (its standard library comes in v0); legacy by flag is unstable.
    std::string flags =
        std::string(scheme) == "v0" ? "-C symbol-mangling-version=v0" : "";
    run("rustc -O " + flags + " -o " + bin + " " + d + "/names.rs 2>&1");
    auto syms = lines(run("nm " + bin + " | awk '{print $NF}'"));
    std::string list;
    std::vector<std::string> rust;
    for (const auto &s : syms)
      if (s.starts_with("_R") ||
          std::regex_search(s, std::regex("17h[0-9a-f]{16}E$"))) {
        rust.push_back(s);
        list += s + "\n";
      }
    std::ofstream(d + "/syms") << list;
    auto theirs = lines(run("c++filt < " + d + "/syms"));
    ASSERT_EQ(theirs.size(), rust.size()) << scheme;
    for (size_t i = 0; i < rust.size(); i++) {
      auto ours = demangle_rust(rust[i]);
      std::string want = std::regex_replace(theirs[i], hashes, "");
      compared++;
      equal += ours && *ours == want;
    }
  }
  run("rm -rf " + d);
  ASSERT_GT(compared, 100u);
  // c++filt names bound lifetimes ('a) and const arguments' types (4:
  // usize), which rustc's alternate form, and ours, leave out.
  EXPECT_GE(double(equal) / double(compared), 0.97)
      << equal << " of " << compared;
  std::printf("%zu of %zu Rust symbols as c++filt reads them\n", equal,
              compared);
}
