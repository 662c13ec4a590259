// Real GPU scripts end to end, offline: ubtrace's front end and codegen,
// the NVPTX target (runtime/jit/nvptx_target.h), the map table baked with
// device addresses as the agent does, and the agent's ModuleRewriter on
// every nvcc-built sample app. ptxas -arch=sm_90 and nvJitLink must accept
// every rewritten module; FileCheck checks the call sites.
#include "backends/gpu/gpu_program.h"
#include "backends/gpu/probe_ids.h"
#include "backends/output/json_output.h"
#include "backends/output/printed_map.h"
#include "backends/output/text_output.h"
#include "gpu_test_support.h"
#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/module_rewriter.h"
#include "runtime/gpu/probe_abi.h"
#include "tests/unit/jit/script_bundle.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;

// The scripts tests/gpu/device-check.sh runs on a GPU, and more shapes.
const char *const kScripts[] = {
    "kernel::vector_add { @threads = count(); } "
    "kernelret::vector_add { @ns = hist(nsecs); }",
    "kernel::vector_add { @start[blockIdx.x] = nsecs; } "
    "kernelret::vector_add { @block_ns = hist(nsecs - @start[blockIdx.x]); }",
    "kernel::* { @by_sm[smid] = count(); @blocks[blockIdx.x, blockIdx.y] = "
    "count(); @lanes = lhist(laneid, 0, 32, 8); }",
    "kernel::mixed_params { @count = max(arg0); @scale = sum(arg1); "
    "@off = min(arg4); printf(\"count=%d offset=%lld pid=%d %s\\n\", arg0, "
    "arg4, pid, comm); }",
    "kernel:*:*scale_kernel* { @s[threadIdx.x % 4] = lhist(threadIdx.x, 0, "
    "256, 32); } kernelret::*collatz { @c = stats(nsecs); @a = avg(warpid); }",
    "kernel::matmul_tiled /threadIdx.x == 0 && threadIdx.y == 0/ { "
    "@tiles[blockIdx.x, blockIdx.y] = count(); } "
    "kernelret::matmul_tiled /threadIdx.x == 0/ { @done = count(); }",
};

struct Compiled {
  backends::gpu::GpuProgram program;
  std::unique_ptr<ModuleRewriter> rewriter;
};

// What the agent does for one CUDA context: addresses into the table,
// then a rewriter for the device's SM (90: the fixtures' and an H100's).
// With `kernels`, `probe` names the kernels it knows (as the CLI does with
// the traced binaries').
Result<Compiled>
compile_for_device(const std::string &script,
                   const backends::gpu::KnownKernels *kernels = nullptr) {
  auto bundle = jit::test::compile_script(script);
  if (!bundle)
    return make_error(bundle.error());
  backends::gpu::GpuCompileOptions options;
  options.nvptx.host.pid = 1234;
  options.nvptx.host.comm = "param_types";
  if (kernels) {
    options.kernels = [kernels] { return kernels; };
    options.first_new_probe_id = bundle->probes.size();
  }
  auto program = backends::gpu::compile_gpu_program(*bundle, options);
  if (!program)
    return make_error(program.error());
  std::vector<uint64_t> addresses;
  for (uint32_t i = 0; i < program->map_table_entries; ++i)
    addresses.push_back(0x7f0000000000ull + (uint64_t(i) << 24));
  auto baked = bake_map_table(program->ptx, addresses);
  if (!baked)
    return make_error(baked.error());
  ProbeProgram probes = backends::gpu::probe_program(*program);
  probes.ptx = *baked;
  auto rewriter = ModuleRewriter::create(std::move(probes), {90});
  if (!rewriter)
    return make_error(rewriter.error());
  return Compiled{std::move(*program), std::move(*rewriter)};
}

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

std::string rewritten_ptx(const RewrittenImage &img) {
  auto parsed = parse_fatbin(img.image);
  EXPECT_TRUE(parsed) << parsed.error();
  if (!parsed || parsed->entries.size() != 1)
    return "";
  auto ptx = entry_ptx(parsed->entries[0]);
  EXPECT_TRUE(ptx) << ptx.error();
  return ptx ? *ptx : "";
}

TEST(GpuScriptProbes,
     EveryScriptCompilesForEveryFixtureAndPtxasAndNvJitLinkAccept) {
  UBT_REQUIRE_FIXTURES();
  if (cuda_tool("ptxas").empty())
    GTEST_SKIP() << "ptxas not found";
  std::string why;
  bool have_nvjitlink = nvjitlink_available(&why);
  std::set<ContentHash> checked;
  size_t instrumented_kernels = 0;
  for (const char *script : kScripts) {
    SCOPED_TRACE(script);
    auto compiled = compile_for_device(script);
    ASSERT_TRUE(compiled) << compiled.error();
    for (const Fixture &f : fixtures()) {
      SCOPED_TRACE(f.name());
      for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
        auto out = compiled->rewriter->rewrite(
            static_cast<const void *>(fatbin.data()));
        ASSERT_TRUE(out) << out.error();
        const RewrittenImage &img = **out;
        if (img.outcome == RewriteOutcome::NoPtx ||
            img.outcome == RewriteOutcome::NoMatch)
          continue;
        ASSERT_EQ(img.outcome, RewriteOutcome::Instrumented) << img.note;
        instrumented_kernels += img.kernels.size();
        std::string ptx = rewritten_ptx(img);
        if (!checked.insert(hash_content(as_bytes(ptx.data(), ptx.size())))
                 .second)
          continue; // the same module from another build variant
        CommandResult r = run_ptxas(ptx);
        EXPECT_EQ(r.status, 0) << "ptxas rejected:\n" << r.output;
        if (have_nvjitlink) {
          LinkResult link = nvjitlink(img.image, LinkInput::Fatbin);
          EXPECT_TRUE(link.ok) << link.log;
        }
      }
    }
  }
  // Script 1-2: vector_add (8 builds each); 3: every kernel of every app
  // (8 builds x (1+1+1+5) + 2 debug builds x 5); 4: param_types; 5: the
  // two scale_kernel instances and collatz of multi_kernel (10 builds);
  // 6: matmul.
  EXPECT_EQ(instrumented_kernels,
            8u + 8u + (8u * 8 + 2u * 5) + 8u + 10u * 3 + 8u);
  if (!have_nvjitlink)
    GTEST_SKIP() << "ptxas checked everything; nvJitLink absent: " << why;
}

TEST(GpuScriptProbes, VectorAddCallSitesAndMapTable) {
  UBT_REQUIRE_FIXTURES();
  if (filecheck_path().empty())
    GTEST_SKIP() << "FileCheck not found (" << UBT_FILECHECK << ")";
  auto compiled = compile_for_device(kScripts[0]);
  ASSERT_TRUE(compiled) << compiled.error();
  // count() reads no argument: a context-free probe; so does the hist.
  ASSERT_EQ(compiled->program.attachments.size(), 2u);
  for (const auto &a : compiled->program.attachments)
    EXPECT_EQ(a.attachment.arg_mask, 0u) << a.attachment.function;
  std::string ptx;
  for (const Fixture &f : fixtures())
    if (f.app == "vector_add" && f.variant == "default" &&
        f.runtime == "static")
      for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
        auto out = compiled->rewriter->rewrite(
            static_cast<const void *>(fatbin.data()));
        ASSERT_TRUE(out) << out.error();
        if ((*out)->outcome == RewriteOutcome::Instrumented)
          ptx = rewritten_ptx(**out);
      }
  ASSERT_FALSE(ptx.empty());
  CommandResult r = filecheck(ptx, R"(
CHECK: .const .align 8 .u64 __ubt_gpu_maps[5] = {139637976727552, 139637993504768, {{.*}}};
CHECK: .func __ubt_probe_p0()
CHECK: match.any.sync.b64
CHECK: atom.add.u64
CHECK: .func __ubt_probe_p1()
CHECK: %globaltimer
CHECK: .entry _Z10vector_addPKfS0_Pfi(
CHECK-NOT: ret;
CHECK: call __ubt_probe_p0;
CHECK-NOT: ret;
CHECK: call __ubt_probe_p1;
CHECK-NEXT: }
CHECK-NEXT: ret;
)");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(GpuScriptProbes, ArgumentsReachTheContextOnlyWhereRead) {
  UBT_REQUIRE_FIXTURES();
  auto compiled = compile_for_device(kScripts[3]);
  ASSERT_TRUE(compiled) << compiled.error();
  ASSERT_EQ(compiled->program.attachments.size(), 1u);
  // arg0, arg1 and arg4: int count, float scale, long long offset.
  EXPECT_EQ(compiled->program.attachments[0].attachment.arg_mask, 0x13u);
}

// The fixture of `app` (default build, static cudart).
std::string fixture_path(const std::string &app) {
  for (const Fixture &f : fixtures())
    if (f.app == app && f.variant == "default" && f.runtime == "static")
      return f.path;
  return "";
}

// Reads through pointers (probe_read*: *p, p->f, p[i], str(), buf()), func
// and probe, in every app: the rewritten modules still pass ptxas and
// nvJitLink (the bounded reads are inlined: nothing left to link).
TEST(GpuScriptProbes, PointerReadsFuncAndProbeInjectIntoEveryApp) {
  UBT_REQUIRE_FIXTURES();
  if (cuda_tool("ptxas").empty())
    GTEST_SKIP() << "ptxas not found";
  std::string why;
  bool have_nvjitlink = nvjitlink_available(&why);
  backends::gpu::KnownKernels kernels;
  for (const char *app :
       {"vector_add", "matmul", "param_types", "multi_kernel"})
    ASSERT_TRUE(kernels.add_binary(fixture_path(app)));
  ASSERT_TRUE(kernels.add_binary(fixtures_dir() + "/labels_static"));
  const std::string scripts[] = {
      "struct Pair { int first; float second; short third; } "
      "kernel::mixed_params { @first = max(((struct Pair *)arg3)->first); "
      "@third = max(((struct Pair *)arg3)->third); "
      "@out = max(*(int32 *)arg2); @e[((int64 *)arg2)[3]] = count(); "
      "@s[str(arg2)] = count(); @b[buf(arg2, 6)] = count(); }",
      "kernel::vector_add { @a3 = max(((int32 *)arg0)[3]); "
      "@b[buf(arg1, arg3 & 15)] = count(); }",
      "kernel::*,kernelret::* { @calls[func] = count(); @at[probe] = count(); "
      "printf(\"%s %s\\n\", func, probe); }",
      "kernel::label_lengths { printf(\"%s %s %r\\n\", str(arg0 + 2 * arg1), "
      "str(arg0 + threadIdx.x * arg1, 5), buf(arg0 + 16, 4)); "
      "@[str(arg0 + threadIdx.x * arg1)] = count(); }",
  };
  std::vector<Fixture> apps = fixtures();
  apps.push_back(
      {"labels", "default", "static", fixtures_dir() + "/labels_static"});
  size_t instrumented = 0;
  for (const std::string &script : scripts) {
    SCOPED_TRACE(script);
    auto compiled = compile_for_device(script, &kernels);
    ASSERT_TRUE(compiled) << compiled.error();
    std::set<ContentHash> checked;
    for (const Fixture &f : apps) {
      SCOPED_TRACE(f.name());
      for (const std::vector<uint8_t> &fatbin : fixture_fatbins(f)) {
        auto out = compiled->rewriter->rewrite(
            static_cast<const void *>(fatbin.data()));
        ASSERT_TRUE(out) << out.error();
        const RewrittenImage &img = **out;
        if (img.outcome != RewriteOutcome::Instrumented)
          continue;
        instrumented += img.kernels.size();
        std::string ptx = rewritten_ptx(img);
        if (!checked.insert(hash_content(as_bytes(ptx.data(), ptx.size())))
                 .second)
          continue;
        CommandResult r = run_ptxas(ptx);
        EXPECT_EQ(r.status, 0) << "ptxas rejected:\n" << r.output;
        if (have_nvjitlink) {
          LinkResult link = nvjitlink(img.image, LinkInput::Fatbin);
          EXPECT_TRUE(link.ok) << link.log;
        }
      }
    }
  }
  // param_types, vector_add (8 builds each), then every kernel of every
  // build (8 builds x 8 kernels, 2 debug builds x 5, labels), labels.
  EXPECT_EQ(instrumented, 8u + 8u + (8u * 8 + 2u * 5 + 1u) + 1u);
  if (!have_nvjitlink)
    GTEST_SKIP() << "ptxas checked everything; nvJitLink absent: " << why;
}

// The kernels the CLI names come from the PTX of the binary's fatbins
// (compressed here): the kernels nvcc wrote (its kept .ptx), with the
// names c++filt gives them.
TEST(GpuScriptProbes, KernelNamesComeFromTheBinarysFatbins) {
  UBT_REQUIRE_FIXTURES();
  backends::gpu::KnownKernels kernels;
  const std::string exe = fixture_path("multi_kernel");
  auto added = kernels.add_binary(exe);
  ASSERT_TRUE(added) << added.error();
  std::set<std::string> want;
  for (const auto &entry : std::filesystem::directory_iterator(
           fixtures_dir() + "/keep/multi_kernel"))
    if (entry.path().extension() == ".ptx") {
      std::string text = read_text(entry.path());
      auto module = parse_ptx(text);
      ASSERT_TRUE(module) << module.error();
      for (const PtxFunction &fn : module->functions)
        if (fn.is_entry)
          want.insert(std::string(fn.name));
    }
  ASSERT_FALSE(want.empty());
  std::set<std::string> got;
  for (const backends::gpu::KnownKernel &k : kernels.kernels()) {
    EXPECT_EQ(k.binary, exe);
    EXPECT_EQ(k.id, fnv1a64(k.mangled));
    got.insert(k.mangled);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(*added, want.size());
  EXPECT_EQ(*kernels.add_binary(exe), 0u); // read once
  auto printed = kernels.printed_names(true);
  auto mangled = kernels.printed_names(false);
  for (const std::string &name : want) {
    CommandResult demangled = run_command("c++filt '" + name + "'");
    ASSERT_EQ(demangled.status, 0);
    std::string line = demangled.output.substr(0, demangled.output.find('\n'));
    EXPECT_EQ(printed[fnv1a64(name)], line);
    EXPECT_EQ(mangled[fnv1a64(name)], name);
  }
}

// `kernel:BIN:*,kernelret:BIN:* { @[probe] = count(); }` on multi_kernel:
// each kernel and site has its own probe name, told apart on the device
// by the context's kernel id and site, and only in that probe.
TEST(GpuScriptProbes, WildcardAttachPointsNameEachKernelTheyMatch) {
  UBT_REQUIRE_FIXTURES();
  backends::gpu::KnownKernels kernels;
  const std::string exe = fixture_path("multi_kernel");
  ASSERT_TRUE(kernels.add_binary(exe));
  ASSERT_TRUE(kernels.add_binary(fixture_path("vector_add")));
  auto compiled = compile_for_device(
      "kernel:" + exe + ":*,kernelret:" + exe +
          ":* { @[probe] = count(); } "
          "kernel::_ZN11ubt_samples7collatzEPii { @c[probe] = count(); }",
      &kernels);
  ASSERT_TRUE(compiled) << compiled.error();
  std::vector<std::string> want;
  for (const char *site : {"kernel", "kernelret"})
    for (const backends::gpu::KnownKernel &k : kernels.kernels())
      if (k.binary == exe)
        want.push_back(std::string(site) + ":" + exe + ":" + k.mangled);
  EXPECT_EQ(compiled->program.probe_names, want);
  // collatz, by its mangled name, matches one kernel: it keeps
  // its name as written, and its probe its own id.
  std::string ptx;
  for (const std::vector<uint8_t> &fatbin :
       fixture_fatbins({"multi_kernel", "default", "static", exe})) {
    auto out =
        compiled->rewriter->rewrite(static_cast<const void *>(fatbin.data()));
    ASSERT_TRUE(out) << out.error();
    if ((*out)->outcome == RewriteOutcome::Instrumented)
      ptx = rewritten_ptx(**out);
  }
  ASSERT_FALSE(ptx.empty());
  CommandResult r = run_ptxas(ptx);
  EXPECT_EQ(r.status, 0) << r.output;
  auto module = parse_ptx(ptx);
  ASSERT_TRUE(module) << module.error();
  auto body = [&](const std::string &name) {
    const PtxFunction *fn = module->find_function(name);
    return fn ? ptx.substr(fn->begin, fn->end - fn->begin) : std::string();
  };
  std::string both = body("__ubt_probe_p0"), one = body("__ubt_probe_p1");
  ASSERT_FALSE(both.empty());
  ASSERT_FALSE(one.empty());
  for (const backends::gpu::KnownKernel &k : kernels.kernels()) {
    std::string id = std::to_string(static_cast<int64_t>(k.id));
    EXPECT_EQ(both.find(id) != std::string::npos, k.binary == exe) << k.mangled;
    EXPECT_EQ(one.find(id), std::string::npos) << k.mangled;
  }
}

// A kernel the CLI did not know when it compiled (a library loaded later)
// gets, where its block's site has a wildcard or several attach points, a
// late probe id; the CLI names it once the agent reports the kernel, by the
// attach point that matches it. Known kernels keep exact rules.
TEST(GpuScriptProbes, KernelsLoadedLaterGetLateProbeIdsNamedByTheirAttachPoint) {
  UBT_REQUIRE_FIXTURES();
  auto bundle = jit::test::compile_script(
      "kernel::*,kernelret::* { @[probe] = count(); } "
      "kernel::lib_fill,kernel::*scale* { @s[probe] = count(); } "
      "kernel::only_me { @o[probe] = count(); }");
  ASSERT_TRUE(bundle) << bundle.error();
  ASSERT_EQ(bundle->probes.size(), 5u);
  backends::gpu::KnownKernels kernels;
  ASSERT_TRUE(kernels.add_binary(fixture_path("multi_kernel")));
  std::vector<std::string> binaries(bundle->probes.size());
  auto ids = backends::gpu::plan_probe_ids(*bundle, binaries, &kernels,
                                           bundle->probes.size());
  std::map<std::pair<uint64_t, uint32_t>, bool> late;
  size_t exact = 0;
  for (const jit::NvptxProbeIdRule &r : ids.rules) {
    if (r.any_kernel)
      late[{r.block, r.site}] = r.late_kernel;
    else
      ++exact;
  }
  const std::map<std::pair<uint64_t, uint32_t>, bool> want_late = {
      {{0, UBT_GPU_SITE_ENTRY}, true},
      {{0, UBT_GPU_SITE_EXIT}, true},
      {{2, UBT_GPU_SITE_ENTRY}, true},   // two attach points
      {{4, UBT_GPU_SITE_ENTRY}, false}}; // one, no wildcard
  EXPECT_EQ(late, want_late);
  // Every known kernel at both sites of block 0, and the scale kernels
  // of multi_kernel for block 2.
  size_t scales = 0;
  for (const backends::gpu::KnownKernel &k : kernels.kernels())
    scales += k.mangled.find("scale") != std::string::npos;
  EXPECT_EQ(exact, 2 * kernels.kernels().size() + scales);

  const std::string fill = "lib_fill",
                    scale = "_ZN7ubt_lib5scaleIfEEvPT_S1_i";
  auto name = [&](uint64_t block, uint32_t site, const std::string &k) {
    uint64_t id = late_probe_id(block, site, fnv1a64(k));
    EXPECT_EQ(late_probe_block(id), block);
    EXPECT_EQ(late_probe_site(id), site);
    return backends::gpu::late_probe_name(bundle->probes, binaries, id, k);
  };
  EXPECT_EQ(name(0, UBT_GPU_SITE_ENTRY, scale), "kernel::" + scale);
  EXPECT_EQ(name(0, UBT_GPU_SITE_EXIT, fill), "kernelret::lib_fill");
  EXPECT_EQ(name(2, UBT_GPU_SITE_ENTRY, fill), "kernel::lib_fill");
  EXPECT_EQ(name(2, UBT_GPU_SITE_ENTRY, scale), "kernel::" + scale);
  EXPECT_EQ(name(2, UBT_GPU_SITE_ENTRY, "_Z5otherv"), "");
  EXPECT_EQ(name(2, UBT_GPU_SITE_EXIT, fill), "");

  // And the probes compile: ptxas takes the module with its late rules.
  backends::gpu::GpuCompileOptions options;
  options.kernels = [&] { return &kernels; };
  options.first_new_probe_id = bundle->probes.size();
  auto program = backends::gpu::compile_gpu_program(*bundle, options);
  ASSERT_TRUE(program) << program.error();
  CommandResult r = run_ptxas(program->ptx);
  EXPECT_EQ(r.status, 0) << r.output;
}

// `@[func] = count()` in `kernel::*` prints one line per kernel, named as
// c++filt names it (text and JSON), from what the device map holds: keys
// {kernel id, kGpuFuncPid}. A kernel the CLI did not know prints its id.
TEST(GpuScriptProbes, FuncKeysPrintOneLinePerKernelName) {
  UBT_REQUIRE_FIXTURES();
  auto bundle = jit::test::compile_script("kernel::* { @[func] = count(); }");
  ASSERT_TRUE(bundle) << bundle.error();
  const runtime::MapSpec *spec = nullptr;
  for (const runtime::MapSpec &m : bundle->maps)
    if (m.role == runtime::MapRole::User && m.name == "@")
      spec = &m;
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->key.kind, runtime::ValueType::Kind::USym);
  ASSERT_EQ(spec->key.size, 16u);

  backends::gpu::KnownKernels kernels;
  ASSERT_TRUE(kernels.add_binary(fixture_path("multi_kernel")));
  const auto names = kernels.printed_names(true);
  std::vector<std::vector<uint8_t>> keys, values;
  auto add = [&](uint64_t id, uint64_t count) {
    std::vector<uint8_t> key(16), value(8);
    int64_t pid = kGpuFuncPid;
    std::memcpy(key.data(), &id, 8);
    std::memcpy(key.data() + 8, &pid, 8);
    std::memcpy(value.data(), &count, 8);
    keys.push_back(std::move(key));
    values.push_back(std::move(value));
  };
  uint64_t count = 0;
  for (const backends::gpu::KnownKernel &k : kernels.kernels())
    add(k.id, 1000 + 24 * ++count);
  add(0x1234abcdull, 7); // a kernel of a module the CLI never read
  std::vector<output::MapEntry> entries;
  for (size_t i = 0; i < keys.size(); ++i)
    entries.push_back({keys[i], values[i]});
  output::FormatContext ctx;
  ctx.gpu_kernel_names = &names;

  std::ostringstream text, json, err;
  output::TextOutput(text, err).map(
      output::build_printed_map(*spec, entries, ctx));
  output::JsonOutput(json).map(output::build_printed_map(*spec, entries, ctx));
  std::string want = "@[0x1234abcd]: 7\n";
  count = 0;
  for (const backends::gpu::KnownKernel &k : kernels.kernels()) {
    CommandResult r = run_command("c++filt '" + k.mangled + "'");
    ASSERT_EQ(r.status, 0);
    std::string name = r.output.substr(0, r.output.find('\n'));
    want += "@[" + name + "]: " + std::to_string(1000 + 24 * ++count) + "\n";
    // JSON map keys lose their blanks, as bpftrace's do.
    std::string key = name;
    std::erase(key, ' ');
    EXPECT_NE(json.str().find("\"" + key +
                              "\": " + std::to_string(1000 + 24 * count)),
              std::string::npos)
        << json.str();
  }
  EXPECT_EQ(text.str(), want);
}

TEST(GpuScriptProbes, WhatTheGpuCannotDoFailsNamingTheProbe) {
  auto bundle = jit::test::compile_script(
      "kernel::vector_add { @x[1] = count(); for ($kv : @x) { "
      "printf(\"%d\\n\", $kv.0); } }");
  ASSERT_TRUE(bundle) << bundle.error();
  auto program = backends::gpu::compile_gpu_program(*bundle);
  ASSERT_FALSE(program);
  EXPECT_NE(program.error().find("kernel::vector_add"), std::string::npos)
      << program.error();
  EXPECT_NE(program.error().find("iterating over a map (for) is not "
                                 "available in GPU probes"),
            std::string::npos)
      << program.error();
}

} // namespace
} // namespace ubtrace::gpu_test
