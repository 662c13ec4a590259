#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/text_edits.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::gpu {
namespace {

TEST(KernelMatch, GlobStarMatchesAnyRun) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("vec*", "vector_add"));
  EXPECT_TRUE(glob_match("*add", "vector_add"));
  EXPECT_TRUE(glob_match("v*_*d", "vector_add"));
  EXPECT_TRUE(glob_match("a**b", "ab"));
  EXPECT_FALSE(glob_match("vec", "vector_add"));
  EXPECT_FALSE(glob_match("*sub*", "vector_add"));
  EXPECT_FALSE(glob_match("v*_*x", "vector_add"));
  // `?` is not a wildcard in bpftrace probe names.
  EXPECT_FALSE(glob_match("vector?add", "vector_add"));
  EXPECT_TRUE(glob_match("a?b", "a?b"));
}

TEST(KernelMatch, DemanglesTemplatesAndPlainFunctions) {
  KernelNames t = kernel_names("_ZN11ubt_samples12scale_kernelIfEEvPT_S1_i");
  EXPECT_EQ(t.signature, "void ubt_samples::scale_kernel<float>(float*, "
                         "float, int)");
  EXPECT_EQ(t.qualified, "ubt_samples::scale_kernel<float>");
  KernelNames f = kernel_names("_Z10vector_addPKfS0_Pfi");
  EXPECT_EQ(f.signature, "vector_add(float const*, float const*, float*, "
                         "int)");
  EXPECT_EQ(f.qualified, "vector_add");
  KernelNames c = kernel_names("fill_c");
  EXPECT_EQ(c.signature, "fill_c");
  EXPECT_EQ(c.qualified, "fill_c");
  // Not a valid mangling: kept as it is.
  KernelNames bad = kernel_names("_Zgarbage");
  EXPECT_EQ(bad.qualified, "_Zgarbage");
}

TEST(KernelMatch, PatternsMatchAnyOfTheThreeNames) {
  KernelNames n = kernel_names("_ZN2ns6kernelEPfi");
  EXPECT_TRUE(kernel_matches("_ZN2ns6kernelEPfi", n));
  EXPECT_TRUE(kernel_matches("ns::kernel", n));
  EXPECT_TRUE(kernel_matches("ns::kernel(float*, int)", n));
  EXPECT_TRUE(kernel_matches("ns::*", n));
  EXPECT_TRUE(kernel_matches("*kernel*", n));
  EXPECT_FALSE(kernel_matches("kernel", n));
  EXPECT_FALSE(kernel_matches("ns::kernel(int)", n));
}

TEST(ContentHash, TellsContentsApartAndIgnoresAddresses) {
  std::vector<uint8_t> a(1000, 7), b = a, c = a;
  c[999] ^= 1;
  EXPECT_EQ(hash_content(a), hash_content(b));
  EXPECT_NE(hash_content(a), hash_content(c));
  EXPECT_NE(hash_content(Bytes(a.data(), 999)), hash_content(a));
  ContentHash k = hash_content(a);
  EXPECT_NE(combine(k, hash_content(Bytes(c.data(), 1))),
            combine(k, hash_content(Bytes(c.data() + 999, 1))));
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

TEST(TextEdits, AppliesInOffsetThenOrder) {
  std::vector<TextEdit> edits = {
      {5, 0, "B", 1}, {5, 0, "A", 0}, {0, 1, "h", 0}, {11, 0, "!", 0}};
  EXPECT_EQ(apply_edits("Hello world", edits), "helloAB world!");
}

} // namespace
} // namespace ubtrace::runtime::gpu
