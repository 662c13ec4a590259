// ModuleRewriter, the agent's entry point, on the fixtures' fatbins as the
// driver calls would hand them over: the rewritten fatbin re-parses, holds
// only instrumented PTX, links with nvJitLink, and identical modules are
// rewritten once.
#include "gpu_test_support.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/gpu/module_rewriter.h"

#include <map>
#include <set>

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;

ProbeProgram count_program(const std::string &pattern = "*") {
  ProbeProgram program;
  program.ptx = read_text(fixtures_dir() + "/probes.ptx");
  program.attachments = {{ProbeSite::Entry, pattern, "__ubt_probe_count"},
                         {ProbeSite::Exit, pattern, "__ubt_probe_bare"}};
  return program;
}

std::unique_ptr<ModuleRewriter> make_rewriter(ProbeProgram program) {
  auto rewriter = ModuleRewriter::create(std::move(program), {90});
  EXPECT_TRUE(rewriter) << rewriter.error();
  return rewriter ? std::move(*rewriter) : nullptr;
}

// The fatbins of a fixture, copied out as a process would hold them.
std::vector<std::vector<uint8_t>> fixture_fatbins(const Fixture &f) {
  std::vector<uint8_t> file = read_file(f.path);
  auto found = find_elf_fatbins(file);
  EXPECT_TRUE(found) << found.error();
  std::vector<std::vector<uint8_t>> out;
  if (found)
    for (const ElfFatbin &fb : found->fatbins)
      out.emplace_back(fb.fatbin.bytes.begin(), fb.fatbin.bytes.end());
  return out;
}

TEST(GpuRewriter, RewrittenFatbinsReparseAsPtxOnly) {
  UBT_REQUIRE_FIXTURES();
  auto rewriter = make_rewriter(count_program());
  ASSERT_TRUE(rewriter);
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.name());
    size_t instrumented = 0, no_ptx = 0;
    for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
      auto out = rewriter->rewrite(static_cast<const void *>(fatbin.data()));
      ASSERT_TRUE(out) << out.error();
      const RewrittenImage &img = **out;
      if (img.outcome == RewriteOutcome::NoPtx) {
        ++no_ptx; // the device-link fatbin: a cubin, no kernels
        continue;
      }
      ASSERT_EQ(img.outcome, RewriteOutcome::Instrumented) << img.note;
      ++instrumented;
      EXPECT_EQ(img.ptx_arch, 90u);
      EXPECT_EQ(img.driver_image(), img.image.data());
      auto parsed = parse_fatbin(img.image);
      ASSERT_TRUE(parsed) << parsed.error();
      EXPECT_EQ(parsed->bytes.size(), img.image.size());
      ASSERT_EQ(parsed->entries.size(), 1u);
      const FatbinEntry &entry = parsed->entries[0];
      EXPECT_EQ(entry.kind, EntryKind::Ptx);
      EXPECT_FALSE(entry.is_compressed());
      EXPECT_EQ(entry.sm_arch, 90u);
      EXPECT_EQ(entry.version_major, 9u);
      EXPECT_EQ(bool(entry.flags & entry_flag::kDebug), f.variant == "G");
      auto ptx = entry_ptx(entry);
      ASSERT_TRUE(ptx) << ptx.error();
      auto module = parse_ptx(*ptx);
      ASSERT_TRUE(module) << module.error();
      for (const InstrumentedKernel &k : img.kernels) {
        const PtxFunction *fn = module->find_function(k.name);
        ASSERT_NE(fn, nullptr) << k.name;
        EXPECT_TRUE(fn->is_entry);
      }
      EXPECT_NE(ptx->find("call __ubt_probe_count, (__ubt_arg);"),
                std::string::npos);
      // A rewritten image is not rewritten again.
      auto again = view_image(img.image);
      ASSERT_TRUE(again);
      auto second = rewriter->rewrite(*again);
      ASSERT_TRUE(second);
      EXPECT_EQ((*second)->outcome, RewriteOutcome::Failed);
    }
    EXPECT_EQ(instrumented, 1u);
    EXPECT_EQ(no_ptx, 1u);
  }
}

TEST(GpuRewriter, IdenticalModulesAreRewrittenOnce) {
  UBT_REQUIRE_FIXTURES();
  auto rewriter = make_rewriter(count_program());
  ASSERT_TRUE(rewriter);
  std::set<std::vector<uint8_t>> distinct;
  std::map<std::vector<uint8_t>, const RewrittenImage *> first_result;
  size_t calls = 0;
  for (const Fixture &f : fixtures()) {
    for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
      distinct.insert(fatbin);
      // A fresh copy each time: the cache keys on content, not address.
      std::vector<uint8_t> copy = fatbin;
      auto out = rewriter->rewrite(static_cast<const void *>(copy.data()));
      ASSERT_TRUE(out) << out.error();
      ++calls;
      auto [it, inserted] = first_result.emplace(fatbin, *out);
      if (!inserted)
        EXPECT_EQ(it->second, *out) << "same content, same cached result";
    }
  }
  // Static and shared builds carry the same device code, and every build's
  // device-link fatbin is alike: far fewer distinct images than calls.
  EXPECT_LT(distinct.size(), calls);
  EXPECT_EQ(rewriter->rewrites_performed(), distinct.size());
  EXPECT_EQ(rewriter->cache_hits(), calls - distinct.size());
}

TEST(GpuRewriter, WrapperInputGetsAWrapperForTheNewFatbin) {
  UBT_REQUIRE_FIXTURES();
  auto rewriter = make_rewriter(count_program());
  ASSERT_TRUE(rewriter);
  Fixture fixture = fixtures().front();
  for (const std::vector<uint8_t> &fatbin : fixture_fatbins(fixture)) {
    FatbinWrapper wrapper{static_cast<int32_t>(kFatbinWrapperMagic),
                          kFatbinWrapperVersionModule, fatbin.data(), nullptr};
    auto out = rewriter->rewrite(static_cast<const void *>(&wrapper));
    ASSERT_TRUE(out) << out.error();
    if ((*out)->outcome != RewriteOutcome::Instrumented)
      continue;
    const RewrittenImage &img = **out;
    EXPECT_EQ(img.input_kind, ImageKind::FatbinWrapper);
    auto view = view_image(img.driver_image());
    ASSERT_TRUE(view) << view.error();
    EXPECT_EQ(view->kind, ImageKind::FatbinWrapper);
    EXPECT_EQ(view->wrapper->version, kFatbinWrapperVersionModule);
    EXPECT_EQ(view->bytes.data(), img.image.data());
    EXPECT_EQ(view->bytes.size(), img.image.size());
    return;
  }
  FAIL() << "no fatbin of " << fixture.name() << " was instrumented";
}

TEST(GpuRewriter, RewrittenFatbinLinksWithNvJitLink) {
  UBT_REQUIRE_FIXTURES();
  std::string why;
  if (!nvjitlink_available(&why))
    GTEST_SKIP() << why;
  auto rewriter = make_rewriter(count_program());
  ASSERT_TRUE(rewriter);
  size_t linked = 0;
  for (const Fixture &f : fixtures()) {
    if (f.runtime != "static" || f.variant != "default")
      continue;
    SCOPED_TRACE(f.name());
    for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
      auto out = rewriter->rewrite(static_cast<const void *>(fatbin.data()));
      ASSERT_TRUE(out) << out.error();
      if ((*out)->outcome != RewriteOutcome::Instrumented)
        continue;
      // nvJitLink takes the fatbin as the driver would: it must find our
      // PTX entry and JIT it for sm_90.
      LinkResult link = nvjitlink((*out)->image, LinkInput::Fatbin);
      ASSERT_TRUE(link.ok) << link.log;
      std::vector<std::string> symbols = elf_function_symbols(link.cubin);
      std::set<std::string> names(symbols.begin(), symbols.end());
      for (const InstrumentedKernel &k : (*out)->kernels)
        EXPECT_TRUE(names.count(k.name)) << k.name;
      ++linked;
    }
  }
  EXPECT_EQ(linked, 4u);
}

TEST(GpuRewriter, PtxCubinAndUnmatchedImagesPassThrough) {
  UBT_REQUIRE_FIXTURES();
  Fixture fixture;
  for (const Fixture &f : fixtures())
    if (f.app == "vector_add" && f.variant == "nocompress")
      fixture = f;
  std::vector<uint8_t> file = read_file(fixture.path);
  auto found = find_elf_fatbins(file);
  ASSERT_TRUE(found);
  std::string ptx;
  std::vector<uint8_t> cubin;
  for (const ElfFatbin &fb : found->fatbins)
    for (const FatbinEntry &e : fb.fatbin.entries) {
      if (e.kind == EntryKind::Ptx)
        ptx = *entry_ptx(e);
      else if (fb.wrapper_version == kFatbinWrapperVersionModule)
        cubin = *entry_contents(e);
    }
  ASSERT_FALSE(ptx.empty());
  ASSERT_FALSE(cubin.empty());

  auto rewriter = make_rewriter(count_program());
  ASSERT_TRUE(rewriter);
  // PTX text in, PTX text (NUL-terminated) out, for cuModuleLoadData.
  auto from_ptx = rewriter->rewrite(static_cast<const void *>(ptx.c_str()));
  ASSERT_TRUE(from_ptx) << from_ptx.error();
  const RewrittenImage &img = **from_ptx;
  ASSERT_EQ(img.outcome, RewriteOutcome::Instrumented) << img.note;
  EXPECT_EQ(img.input_kind, ImageKind::Ptx);
  ASSERT_FALSE(img.image.empty());
  EXPECT_EQ(img.image.back(), 0);
  auto again = view_image(img.driver_image());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->kind, ImageKind::Ptx);
  CommandResult r = run_ptxas(std::string_view(
      reinterpret_cast<const char *>(img.image.data()), img.image.size() - 1));
  EXPECT_EQ(r.status, 0) << r.output;

  // A cubin has no PTX to instrument.
  auto from_cubin = rewriter->rewrite(static_cast<const void *>(cubin.data()));
  ASSERT_TRUE(from_cubin) << from_cubin.error();
  EXPECT_EQ((*from_cubin)->outcome, RewriteOutcome::NoPtx);

  // No kernel matches: the module goes on untouched.
  auto unmatched = make_rewriter(count_program("no_such_kernel"));
  ASSERT_TRUE(unmatched);
  auto out = unmatched->rewrite(static_cast<const void *>(ptx.c_str()));
  ASSERT_TRUE(out);
  EXPECT_EQ((*out)->outcome, RewriteOutcome::NoMatch);
  EXPECT_TRUE((*out)->image.empty());

  // Garbage is an error, not a crash.
  const char junk[] = "\x01\x02\x03\x04 not a module";
  EXPECT_FALSE(rewriter->rewrite(static_cast<const void *>(junk)));
}

TEST(GpuRewriter, ProbeProgramNamingAMissingFunctionIsRefused) {
  UBT_REQUIRE_FIXTURES();
  ProbeProgram program = count_program();
  program.attachments.push_back({ProbeSite::Entry, "*", "__ubt_no_such"});
  auto rewriter = ModuleRewriter::create(std::move(program));
  ASSERT_FALSE(rewriter);
  EXPECT_NE(rewriter.error().find("__ubt_no_such"), std::string::npos);
}

} // namespace
} // namespace ubtrace::gpu_test
