#include "runtime/symbols/binary_cache.h"
#include "runtime/symbols/usdt_notes.h"
#include "tests/unit/symbols/test_support.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <regex>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::prog;
using ubtrace::symbols_test::run_command;

namespace {

std::vector<std::string> usdt_programs() {
  std::vector<std::string> out{prog("usdt_pie"), prog("usdt_nopie")};
  if (UBT_HAVE_GCC_USDT)
    out.push_back(prog("usdt_gcc"));
  return out;
}

// readelf -n's view of the stapsdt notes.
std::vector<UsdtNote> readelf_notes(const std::string &path) {
  auto out = run_command({"readelf", "-n", "-W", path});
  std::vector<UsdtNote> notes;
  // With -W, "Provider:" ends the note's header line.
  std::regex provider(R"(Provider: (\S+)$)"), name(R"(^\s*Name: (.*)$)"),
      location(R"(^\s*Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), )"
               R"(Semaphore: (0x[0-9a-f]+)$)"),
      arguments(R"(^\s*Arguments: ?(.*)$)");
  std::istringstream in(out.out);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, provider)) {
      notes.emplace_back();
      notes.back().provider = m[1];
    } else if (notes.empty()) {
      continue;
    } else if (std::regex_match(line, m, name)) {
      notes.back().name = m[1];
    } else if (std::regex_search(line, m, location)) {
      notes.back().pc = std::stoull(m[1], nullptr, 16);
      notes.back().base = std::stoull(m[2], nullptr, 16);
      notes.back().semaphore = std::stoull(m[3], nullptr, 16);
    } else if (std::regex_match(line, m, arguments)) {
      notes.back().args = m[1];
    }
  }
  return notes;
}

const UsdtProbe *find(const std::vector<UsdtProbe> &probes,
                      const std::string &name) {
  for (const auto &p : probes)
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace

TEST(UsdtNotes, AgreeWithReadelf) {
  for (const auto &path : usdt_programs()) {
    SCOPED_TRACE(path);
    auto file = ElfFile::open(path);
    ASSERT_TRUE(file);
    auto notes = read_usdt_notes(*file);
    ASSERT_TRUE(notes) << notes.error();
    auto expected = readelf_notes(path);
    ASSERT_EQ(notes->size(), expected.size());
    ASSERT_EQ(notes->size(), 7u);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ((*notes)[i].provider, expected[i].provider);
      EXPECT_EQ((*notes)[i].name, expected[i].name);
      EXPECT_EQ((*notes)[i].pc, expected[i].pc);
      EXPECT_EQ((*notes)[i].base, expected[i].base);
      EXPECT_EQ((*notes)[i].semaphore, expected[i].semaphore);
      EXPECT_EQ((*notes)[i].args, expected[i].args);
    }
  }
}

TEST(UsdtNotes, ProbesSitesAndSemaphores) {
  for (const auto &path : usdt_programs()) {
    SCOPED_TRACE(path);
    auto info = BinaryInfo::open(path);
    ASSERT_TRUE(info);
    const auto &probes = (*info)->usdt_probes();
    ASSERT_TRUE(probes) << probes.error();
    std::vector<std::string> names;
    for (const auto &p : *probes)
      names.push_back(p.provider + ":" + p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"ubt:args2", "ubt:consts",
                                               "ubt:globals", "ubt:sema",
                                               "ubt:small", "ubt:twice"}));
    EXPECT_EQ(find(*probes, "twice")->sites.size(), 2u);
    EXPECT_FALSE(find(*probes, "args2")->semaphore);
    const UsdtProbe *sema = find(*probes, "sema");
    ASSERT_TRUE(sema->semaphore);
    // The semaphore is the program's ubt_sema_semaphore, in .probes.
    const ElfSymbol *sym =
        (*info)->symbols().object_named("ubt_sema_semaphore");
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(sema->semaphore->vaddr, sym->vaddr);
    const Section *probes_section = (*info)->elf().section(".probes");
    ASSERT_NE(probes_section, nullptr);
    EXPECT_EQ(sema->semaphore->file_offset,
              sym->vaddr - probes_section->vaddr + probes_section->offset);

    // Every site is a one-byte nop in the file.
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    for (const auto &p : *probes)
      for (const auto &site : p.sites) {
        ASSERT_LT(site.file_offset, bytes.size());
        EXPECT_EQ(static_cast<uint8_t>(bytes[site.file_offset]), 0x90)
            << p.name;
        EXPECT_TRUE(site.args_error.empty()) << site.args_error;
      }
    const UsdtProbe *consts = find(*probes, "consts");
    ASSERT_EQ(consts->sites[0].args.size(), 3u);
    EXPECT_EQ(consts->sites[0].args[0].kind, UsdtArg::Kind::Constant);
    EXPECT_EQ(consts->sites[0].args[1].constant, -7);
    EXPECT_EQ(consts->sites[0].args[2].constant, 300);
  }
}

TEST(UsdtNotes, GccSymbolOperandsResolve) {
  if (!UBT_HAVE_GCC_USDT)
    GTEST_SKIP() << "gcc is not installed";
  auto info = BinaryInfo::open(prog("usdt_gcc"));
  ASSERT_TRUE(info);
  const auto &probes = (*info)->usdt_probes();
  ASSERT_TRUE(probes);
  const UsdtSite &site = find(*probes, "globals")->sites[0];
  ASSERT_EQ(site.args.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const UsdtArg &arg = site.args[i];
    if (arg.symbol.empty())
      GTEST_SKIP() << "gcc did not use a symbol operand: " << arg.text;
    ASSERT_EQ(arg.kind, UsdtArg::Kind::Memory) << arg.error;
    EXPECT_EQ(arg.reg.reg, X86Register::Rip);
    const ElfSymbol *sym = (*info)->symbols().object_named(arg.symbol);
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(site.vaddr + arg.displacement, sym->vaddr);
  }
}

TEST(UsdtNotes, StapsdtBaseAdjustsAddresses) {
  // A copy whose notes say .stapsdt.base was linked 2 bytes lower than it is
  // (what prelink leaves behind): pc and semaphore move up by 2.
  namespace fs = std::filesystem;
  const std::string path = prog("usdt_pie");
  fs::path copy =
      fs::temp_directory_path() / ("ubt-usdt-" + std::to_string(::getpid()));
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  auto original = ElfFile::open(path);
  ASSERT_TRUE(original);
  auto notes = read_usdt_notes(*original);
  ASSERT_TRUE(notes);
  const Section *section = original->section(".note.stapsdt");
  ASSERT_NE(section, nullptr);
  {
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)),
                      std::istreambuf_iterator<char>());
    // Each note's base field: 8 bytes after its pc, both little-endian.
    for (const UsdtNote &note : *notes) {
      std::string pattern(16, '\0');
      std::memcpy(pattern.data(), &note.pc, 8);
      std::memcpy(pattern.data() + 8, &note.base, 8);
      auto at = bytes.find(pattern, section->offset);
      ASSERT_NE(at, std::string::npos);
      uint64_t lowered = note.base - 0x2;
      std::memcpy(bytes.data() + at + 8, &lowered, 8);
    }
    f.seekp(0);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  auto moved = ElfFile::open(copy.string());
  ASSERT_TRUE(moved);
  auto before = read_usdt_probes(*original, nullptr);
  auto after = read_usdt_probes(*moved, nullptr);
  ASSERT_TRUE(before);
  ASSERT_TRUE(after) << after.error();
  ASSERT_EQ(before->size(), after->size());
  for (size_t i = 0; i < before->size(); ++i) {
    EXPECT_EQ((*after)[i].sites[0].vaddr, (*before)[i].sites[0].vaddr + 0x2);
    if ((*before)[i].semaphore)
      EXPECT_EQ((*after)[i].semaphore->vaddr,
                (*before)[i].semaphore->vaddr + 0x2);
  }
  fs::remove(copy);
}

TEST(UsdtNotes, FileWithoutNotes) {
  auto file = ElfFile::open(prog("symtest_pie"));
  ASSERT_TRUE(file);
  auto probes = read_usdt_probes(*file, nullptr);
  ASSERT_TRUE(probes);
  EXPECT_TRUE(probes->empty());
}
