// Fatbin parsing on real nvcc 13 output: every sample app in every
// compression/runtime variant, checked against what nvcc itself kept
// (--keep: the .ptx and .cubin it embedded), against fatbinary (the tool
// that writes fatbins) and, where installed, against cuobjdump.
#include "gpu_test_support.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/gpu/fatbin_writer.h"
#include "runtime/gpu/image.h"

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

namespace ubtrace::gpu_test {
namespace {

using namespace runtime::gpu;
namespace fs = std::filesystem;

// The fatbin of the application's own module (wrapper version 1), as
// opposed to the device-link fatbin nvcc adds (version 2).
const ElfFatbin *module_fatbin(const ElfFatbins &found) {
  for (const ElfFatbin &f : found.fatbins)
    if (f.wrapper_version == kFatbinWrapperVersionModule)
      return &f;
  return nullptr;
}

const FatbinEntry *first_entry(const Fatbin &fatbin, EntryKind kind) {
  for (const FatbinEntry &e : fatbin.entries)
    if (e.kind == kind)
      return &e;
  return nullptr;
}

// What nvcc 13 does with each variant's flags (see fatbin_format.h).
struct ExpectedCompression {
  Compression ptx;
  Compression cubin;
};
ExpectedCompression expected_compression(const std::string &variant) {
  if (variant == "nocompress")
    return {Compression::None, Compression::None};
  if (variant == "compressall")
    return {Compression::Zstd, Compression::Zstd};
  if (variant == "lz4")
    return {Compression::Lz4, Compression::None};
  if (variant == "G")
    return {Compression::Zstd, Compression::Zstd}; // debug cubins too
  return {Compression::Zstd, Compression::None};   // default, lineinfo
}

TEST(GpuFixtures, ManifestListsEveryBuild) {
  UBT_REQUIRE_FIXTURES();
  std::vector<Fixture> all = fixtures();
  // 4 apps x 4 compression variants x 2 runtimes, plus -lineinfo and -G.
  EXPECT_EQ(all.size(), 4u * 4u * 2u + 2u);
  for (const Fixture &f : all)
    EXPECT_TRUE(fs::exists(f.path)) << f.path;
}

TEST(GpuFatbin, EveryFixtureHasTheModuleAndLinkFatbins) {
  UBT_REQUIRE_FIXTURES();
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.name());
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found) << found.error();
    EXPECT_TRUE(found->has_module_id_section);
    // nvcc registers two fatbins: the module's and the device-link one.
    EXPECT_EQ(found->wrapper_count, 2u);
    ASSERT_EQ(found->fatbins.size(), 2u);
    for (const ElfFatbin &fb : found->fatbins) {
      EXPECT_EQ(fb.section, ".nv_fatbin");
      EXPECT_GE(fb.wrapper_index, 0);
      // The container really sits at the offset reported.
      EXPECT_EQ(load_le<uint32_t>(file.data() + fb.file_offset), kFatbinMagic);
    }
    const ElfFatbin *mod = module_fatbin(*found);
    ASSERT_NE(mod, nullptr);
    // -gencode arch=compute_90,code=[sm_90,compute_90]: one cubin, one PTX.
    ASSERT_EQ(mod->fatbin.entries.size(), 2u);
    const FatbinEntry *ptx = first_entry(mod->fatbin, EntryKind::Ptx);
    const FatbinEntry *cubin = first_entry(mod->fatbin, EntryKind::Cubin);
    ASSERT_NE(ptx, nullptr);
    ASSERT_NE(cubin, nullptr);
    EXPECT_EQ(ptx->sm_arch, 90u);
    EXPECT_EQ(cubin->sm_arch, 90u);
    EXPECT_TRUE(ptx->flags & entry_flag::k64Bit);
    EXPECT_EQ(bool(ptx->flags & entry_flag::kDebug), f.variant == "G");
    ExpectedCompression want = expected_compression(f.variant);
    EXPECT_EQ(compression_name(ptx->compression), compression_name(want.ptx));
    EXPECT_EQ(compression_name(cubin->compression),
              compression_name(want.cubin));
    // The device-link fatbin holds one cubin and no PTX.
    for (const ElfFatbin &fb : found->fatbins) {
      if (&fb == mod)
        continue;
      EXPECT_EQ(fb.wrapper_version, kFatbinWrapperVersionLinked);
      EXPECT_EQ(first_entry(fb.fatbin, EntryKind::Ptx), nullptr);
    }
  }
}

TEST(GpuFatbin, ContentsMatchWhatNvccKept) {
  UBT_REQUIRE_FIXTURES();
  size_t checked = 0;
  for (const Fixture &f : fixtures()) {
    std::string keep = fixtures_dir() + "/keep/" + f.app + "/" + f.app;
    if (f.variant != "default" || f.runtime != "static")
      continue;
    SCOPED_TRACE(f.name());
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found) << found.error();
    const ElfFatbin *mod = module_fatbin(*found);
    ASSERT_NE(mod, nullptr);
    // The whole container is nvcc's .fatbin byte for byte.
    std::vector<uint8_t> kept_fatbin = read_file(keep + ".fatbin");
    EXPECT_EQ(std::vector<uint8_t>(mod->fatbin.bytes.begin(),
                                   mod->fatbin.bytes.end()),
              kept_fatbin);
    auto cubin = entry_contents(*first_entry(mod->fatbin, EntryKind::Cubin));
    ASSERT_TRUE(cubin) << cubin.error();
    EXPECT_EQ(*cubin, read_file(keep + ".sm_90.cubin"));
    auto ptx = entry_ptx(*first_entry(mod->fatbin, EntryKind::Ptx));
    ASSERT_TRUE(ptx) << ptx.error();
    // fatbinary strips comments and indentation from the PTX it stores.
    EXPECT_EQ(normalize_ptx(*ptx), normalize_ptx(read_text(keep + ".ptx")));
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}

// Every variant of an app decodes to the contents of its uncompressed
// build: checks the zstd and LZ4 paths against the plain bytes.
TEST(GpuFatbin, AllCompressionVariantsDecodeToTheSameContents) {
  UBT_REQUIRE_FIXTURES();
  std::map<std::string, std::pair<std::string, std::vector<uint8_t>>> plain;
  for (const Fixture &f : fixtures()) {
    if (f.variant != "nocompress" || f.runtime != "static")
      continue;
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found) << found.error();
    const Fatbin &fb = module_fatbin(*found)->fatbin;
    auto ptx = entry_ptx(*first_entry(fb, EntryKind::Ptx));
    auto cubin = entry_contents(*first_entry(fb, EntryKind::Cubin));
    ASSERT_TRUE(ptx && cubin);
    plain[f.app] = {*ptx, *cubin};
  }
  ASSERT_EQ(plain.size(), 4u);
  size_t compared = 0;
  for (const Fixture &f : fixtures()) {
    if (f.variant == "lineinfo" || f.variant == "G")
      continue;
    SCOPED_TRACE(f.name());
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found) << found.error();
    const Fatbin &fb = module_fatbin(*found)->fatbin;
    const FatbinEntry *ptx_entry = first_entry(fb, EntryKind::Ptx);
    auto ptx = entry_ptx(*ptx_entry);
    ASSERT_TRUE(ptx) << ptx.error();
    EXPECT_EQ(*ptx, plain[f.app].first);
    // The stored PTX carries its NUL in the uncompressed size.
    if (ptx_entry->is_compressed())
      EXPECT_EQ(ptx_entry->uncompressed_size, ptx->size() + 1);
    auto cubin = entry_contents(*first_entry(fb, EntryKind::Cubin));
    ASSERT_TRUE(cubin) << cubin.error();
    EXPECT_EQ(*cubin, plain[f.app].second);
    ++compared;
  }
  EXPECT_EQ(compared, 32u);
}

// nvcc -c objects carry the same fatbin, reached through a relocation.
TEST(GpuFatbin, RelocatableObjectWrapperResolvesThroughItsRelocation) {
  UBT_REQUIRE_FIXTURES();
  for (const char *app : {"vector_add", "multi_kernel"}) {
    SCOPED_TRACE(app);
    std::string keep = fixtures_dir() + "/keep/" + app + "/" + app;
    std::vector<uint8_t> object = read_file(keep + ".o");
    ASSERT_FALSE(object.empty());
    auto found = find_elf_fatbins(object);
    ASSERT_TRUE(found) << found.error();
    ASSERT_EQ(found->fatbins.size(), 1u);
    EXPECT_EQ(found->wrapper_count, 1u);
    EXPECT_EQ(found->fatbins[0].wrapper_index, 0);
    std::vector<uint8_t> bytes(found->fatbins[0].fatbin.bytes.begin(),
                               found->fatbins[0].fatbin.bytes.end());
    EXPECT_EQ(bytes, read_file(keep + ".fatbin"));
  }
}

// Our writer lays an uncompressed PTX entry out exactly as fatbinary does.
TEST(GpuFatbin, WriterMatchesFatbinaryByteForByte) {
  UBT_REQUIRE_FIXTURES();
  std::string fatbinary = cuda_tool("fatbinary");
  if (fatbinary.empty())
    GTEST_SKIP() << "fatbinary not found";
  std::string dir = make_temp_dir();
  for (const Fixture &f : fixtures()) {
    if (f.variant != "nocompress" || f.runtime != "static")
      continue;
    SCOPED_TRACE(f.name());
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found);
    const FatbinEntry *entry =
        first_entry(module_fatbin(*found)->fatbin, EntryKind::Ptx);
    auto ptx = entry_ptx(*entry);
    ASSERT_TRUE(ptx);
    write_file(dir + "/in.ptx", *ptx);
    for (const char *options : {"", "-O1 -lineinfo"}) {
      std::string cmdline = *options
                                ? std::string(" --cmdline=\"") + options + "\""
                                : std::string();
      CommandResult r = run_command(
          fatbinary + " --create=" + dir + "/out.fatbin -64 --compress=false" +
          cmdline + " --image3=kind=ptx,sm=90,file=" + dir + "/in.ptx");
      ASSERT_EQ(r.status, 0) << r.output;
      FatbinEntrySpec spec;
      spec.sm_arch = 90;
      spec.version_major = entry->version_major;
      spec.version_minor = entry->version_minor;
      spec.options = options;
      spec.contents = as_bytes(ptx->data(), ptx->size());
      std::vector<uint8_t> ours =
          write_fatbin(std::span<const FatbinEntrySpec>(&spec, 1));
      EXPECT_EQ(ours, read_file(dir + "/out.fatbin")) << "options: " << options;
      // And fatbinary's compressed output decodes to the same PTX.
      r = run_command(fatbinary + " --create=" + dir +
                      "/z.fatbin -64 --image3=kind=ptx,sm=90,file=" + dir +
                      "/in.ptx");
      ASSERT_EQ(r.status, 0) << r.output;
      std::vector<uint8_t> z = read_file(dir + "/z.fatbin");
      auto parsed = parse_fatbin(z);
      ASSERT_TRUE(parsed) << parsed.error();
      ASSERT_EQ(parsed->entries.size(), 1u);
      EXPECT_TRUE(parsed->entries[0].is_compressed());
      auto text = entry_ptx(parsed->entries[0]);
      ASSERT_TRUE(text) << text.error();
      EXPECT_EQ(*text, *ptx);
    }
  }
  fs::remove_all(dir);
}

// In-memory images as the driver entry points receive them.
TEST(GpuImage, ClassifiesAndSizesFixtureImages) {
  UBT_REQUIRE_FIXTURES();
  for (const Fixture &f : fixtures()) {
    if (f.runtime != "static")
      continue;
    SCOPED_TRACE(f.name());
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found);
    const Fatbin &fb = module_fatbin(*found)->fatbin;

    // A fatbin pointer: the extent comes from its header alone.
    std::vector<uint8_t> copy(fb.bytes.begin(), fb.bytes.end());
    auto fat = view_image(static_cast<const void *>(copy.data()));
    ASSERT_TRUE(fat) << fat.error();
    EXPECT_EQ(fat->kind, ImageKind::Fatbin);
    EXPECT_EQ(fat->bytes.size(), copy.size());

    // A wrapper, as __cudaRegisterFatBinary gets it.
    FatbinWrapper wrapper{static_cast<int32_t>(kFatbinWrapperMagic),
                          kFatbinWrapperVersionModule, copy.data(), nullptr};
    auto wrapped = view_image(static_cast<const void *>(&wrapper));
    ASSERT_TRUE(wrapped) << wrapped.error();
    EXPECT_EQ(wrapped->kind, ImageKind::FatbinWrapper);
    EXPECT_EQ(wrapped->wrapper, &wrapper);
    EXPECT_EQ(wrapped->bytes.data(), copy.data());
    EXPECT_EQ(wrapped->bytes.size(), copy.size());

    // A bare cubin: its extent is what its ELF headers cover.
    auto cubin = entry_contents(*first_entry(fb, EntryKind::Cubin));
    ASSERT_TRUE(cubin);
    auto elf = view_image(static_cast<const void *>(cubin->data()));
    ASSERT_TRUE(elf) << elf.error();
    EXPECT_EQ(elf->kind, ImageKind::Cubin);
    EXPECT_EQ(elf->bytes.size(), cubin->size());

    // PTX text: up to its NUL.
    auto ptx = entry_ptx(*first_entry(fb, EntryKind::Ptx));
    ASSERT_TRUE(ptx);
    auto text = view_image(static_cast<const void *>(ptx->c_str()));
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(text->kind, ImageKind::Ptx);
    EXPECT_EQ(text->bytes.size(), ptx->size());

    auto bounded = view_image(Bytes(copy.data(), copy.size() - 8));
    EXPECT_FALSE(bounded) << "a truncated fatbin must not view";
  }
}

// cuobjdump -lptx -lelf lists one line per entry; our count per kind and
// architecture must agree. cuobjdump is not part of every toolkit install
// (the CI machine's has none): skipped there, run on the device machine.
TEST(GpuFatbin, AgreesWithCuobjdump) {
  UBT_REQUIRE_FIXTURES();
  std::string cuobjdump = cuda_tool("cuobjdump");
  if (cuobjdump.empty())
    GTEST_SKIP() << "cuobjdump not installed with this CUDA toolkit";
  std::regex line(R"((PTX|ELF) file\s+\d+:\s*\S*?sm_(\d+)\S*)");
  for (const Fixture &f : fixtures()) {
    SCOPED_TRACE(f.name());
    CommandResult r = run_command(cuobjdump + " -lptx -lelf " + f.path);
    ASSERT_EQ(r.status, 0) << r.output;
    std::map<std::pair<std::string, int>, int> theirs, ours;
    std::istringstream lines(r.output);
    std::string text;
    while (std::getline(lines, text)) {
      std::smatch m;
      if (std::regex_search(text, m, line))
        ++theirs[{m[1].str(), std::stoi(m[2].str())}];
    }
    std::vector<uint8_t> file = read_file(f.path);
    auto found = find_elf_fatbins(file);
    ASSERT_TRUE(found);
    for (const ElfFatbin &fb : found->fatbins)
      for (const FatbinEntry &e : fb.fatbin.entries)
        ++ours[{e.kind == EntryKind::Ptx ? "PTX" : "ELF",
                static_cast<int>(e.sm_arch)}];
    EXPECT_EQ(ours, theirs) << r.output;
  }
}

} // namespace
} // namespace ubtrace::gpu_test
