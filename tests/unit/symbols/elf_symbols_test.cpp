#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/debug_file.h"
#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/elf_symbols.h"
#include "tests/unit/symbols/test_support.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::prog;
using ubtrace::symbols_test::run_command;

namespace {

SymbolTable load(const std::string &path, SymbolLoadOptions options = {}) {
  auto file = ElfFile::open(path);
  EXPECT_TRUE(file) << (file ? "" : file.error());
  auto table = SymbolTable::load(*file, options);
  EXPECT_TRUE(table);
  return std::move(*table);
}

const ElfSymbol *only_function(const SymbolTable &t, const std::string &name) {
  auto found = t.functions_named(name);
  return found.size() == 1 ? found[0] : nullptr;
}

// nm's view of the defined text symbols: name -> address.
std::map<std::string, uint64_t> nm_functions(const std::string &path) {
  std::map<std::string, uint64_t> out;
  auto nm = run_command({"nm", "--defined-only", path});
  std::istringstream in(nm.out);
  std::string addr, type, name;
  while (in >> addr >> type >> name)
    if (type == "T" || type == "t" || type == "W" || type == "i")
      out[name] = std::stoull(addr, nullptr, 16);
  return out;
}

} // namespace

TEST(ElfFile, KindsAndSegments) {
  auto pie = ElfFile::open(prog("symtest_pie"));
  ASSERT_TRUE(pie) << pie.error();
  EXPECT_EQ(pie->kind(), ElfKind::SharedObject);
  auto nopie = ElfFile::open(prog("symtest_nopie"));
  ASSERT_TRUE(nopie) << nopie.error();
  EXPECT_EQ(nopie->kind(), ElfKind::Executable);
  EXPECT_FALSE(pie->segments().empty());
  EXPECT_EQ(pie->build_id().size(), 20u);
  // A non-PIE executable loads at its link-time addresses (0x400000 up).
  EXPECT_GE(nopie->segments().front().vaddr, 0x400000u);

  auto not_elf = ElfFile::open("/etc/passwd");
  EXPECT_FALSE(not_elf);
  auto missing = ElfFile::open("/nonexistent/ubtrace");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/ubtrace"), std::string::npos);
}

TEST(ElfFile, VaddrOffsetRoundTripAndBytes) {
  auto file = ElfFile::open(prog("symtest_pie"));
  ASSERT_TRUE(file);
  auto table = SymbolTable::load(*file);
  ASSERT_TRUE(table);
  std::ifstream in(prog("symtest_pie"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  int checked = 0;
  for (const ElfSymbol &s : table->symbols()) {
    if (!s.is_function() || s.size == 0)
      continue;
    auto off = file->vaddr_to_offset(s.vaddr);
    ASSERT_TRUE(off) << s.name;
    EXPECT_EQ(file->offset_to_vaddr(*off), s.vaddr) << s.name;
    auto code = file->read_at_vaddr(s.vaddr, s.size);
    ASSERT_TRUE(code);
    ASSERT_EQ(code->size(), s.size);
    EXPECT_EQ(std::string(code->begin(), code->end()),
              bytes.substr(*off, s.size))
        << s.name;
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST(SymbolTable, FunctionsOfATestProgramAgreeWithNm) {
  for (const char *name : {"symtest_pie", "symtest_nopie"}) {
    SymbolTable t = load(prog(name));
    auto nm = nm_functions(prog(name));
    ASSERT_FALSE(nm.empty()) << "nm found nothing in " << name;
    for (const char *fn : {"ubt_add", "ubt_static_helper", "ubt_read_one",
                           "ubt_read_two", "ubt_reader", "main"}) {
      const ElfSymbol *s = only_function(t, fn);
      ASSERT_NE(s, nullptr) << name << ": " << fn;
      EXPECT_EQ(s->vaddr, nm.at(fn)) << name << ": " << fn;
      EXPECT_GT(s->size, 0u) << fn;
      EXPECT_EQ(s->type, SymbolType::Function);
    }
    EXPECT_EQ(only_function(t, "ubt_add")->binding, SymbolBinding::Global);
    EXPECT_EQ(only_function(t, "ubt_static_helper")->binding,
              SymbolBinding::Local);
    // Objects are kept (USDT arguments name them), not as functions.
    EXPECT_TRUE(t.functions_named("return_address").empty());
    EXPECT_NE(t.object_named("return_address"), nullptr);
  }
}

TEST(SymbolTable, AliasesShareAnAddress) {
  SymbolTable t = load(prog("symtest_pie"));
  const ElfSymbol *target = only_function(t, "ubt_alias_target");
  const ElfSymbol *alias = only_function(t, "ubt_alias");
  ASSERT_NE(target, nullptr);
  ASSERT_NE(alias, nullptr);
  EXPECT_EQ(target->vaddr, alias->vaddr);
  auto at = t.functions_starting_at(target->vaddr);
  ASSERT_EQ(at.size(), 2u);
  // The shorter of two global names names the address.
  EXPECT_EQ(t.function_at(target->vaddr + 1)->name, "ubt_alias");
}

TEST(SymbolTable, FunctionAtCoversSizes) {
  SymbolTable t = load(prog("symtest_nopie"));
  const ElfSymbol *add = only_function(t, "ubt_add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(t.function_at(add->vaddr)->name, "ubt_add");
  EXPECT_EQ(t.function_at(add->vaddr + add->size - 1)->name, "ubt_add");
  const ElfSymbol *after = t.function_at(add->vaddr + add->size);
  EXPECT_TRUE(after == nullptr || after->name != "ubt_add");
  EXPECT_EQ(t.function_at(0), nullptr);
}

TEST(SymbolTable, StrippedBinaryKeepsDynamicSymbols) {
  if (!UBT_HAVE_OBJCOPY)
    GTEST_SKIP() << "objcopy is not installed";
  SymbolLoadOptions no_debug;
  no_debug.debug_files = false;
  SymbolTable t = load(prog("symtest_stripped"), no_debug);
  auto file = ElfFile::open(prog("symtest_stripped"));
  ASSERT_TRUE(file);
  EXPECT_EQ(file->section(".symtab"), nullptr);
  // Exported by -rdynamic: still there through .dynsym.
  EXPECT_NE(only_function(t, "ubt_add"), nullptr);
  EXPECT_NE(only_function(t, "main"), nullptr);
  // A static function lived only in .symtab.
  EXPECT_TRUE(t.functions_named("ubt_static_helper").empty());
}

TEST(SymbolTable, SeparateDebugFileByDebuglink) {
  if (!UBT_HAVE_OBJCOPY)
    GTEST_SKIP() << "objcopy is not installed";
  auto file = ElfFile::open(prog("symtest_debuglink"));
  ASSERT_TRUE(file);
  EXPECT_EQ(file->section(".symtab"), nullptr);
  auto link = file->debug_link();
  ASSERT_TRUE(link);
  EXPECT_EQ(link->name, "symtest.debug");
  EXPECT_EQ(find_debug_file(*file, "/nonexistent"), prog("symtest.debug"));
  SymbolLoadOptions options;
  options.debug_root = "/nonexistent";
  SymbolTable t = load(prog("symtest_debuglink"), options);
  EXPECT_NE(only_function(t, "ubt_static_helper"), nullptr);
  ASSERT_EQ(t.sources().size(), 2u);
  EXPECT_EQ(t.sources()[1], prog("symtest.debug"));
}

TEST(SymbolTable, SeparateDebugFileByBuildId) {
  if (!UBT_HAVE_OBJCOPY)
    GTEST_SKIP() << "objcopy is not installed";
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("ubt-symbols-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  // Alone in its folder, the debuglink leads nowhere: only the build-id
  // tree can find the symbols.
  fs::copy_file(prog("symtest_debuglink"), dir / "bin" / "app");
  auto file = ElfFile::open((dir / "bin" / "app").string());
  ASSERT_TRUE(file);
  std::string id = build_id_hex(file->build_id());
  ASSERT_EQ(id.size(), 40u);
  fs::path debug =
      dir / "root" / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
  fs::create_directories(debug.parent_path());
  SymbolLoadOptions options;
  options.debug_root = (dir / "root").string();
  SymbolTable before = load((dir / "bin" / "app").string(), options);
  EXPECT_TRUE(before.functions_named("ubt_static_helper").empty());
  fs::copy_file(prog("symtest.debug"), debug);
  SymbolTable after = load((dir / "bin" / "app").string(), options);
  EXPECT_NE(only_function(after, "ubt_static_helper"), nullptr);
  // A debug file of another build is refused.
  fs::remove(debug);
  fs::copy_file(prog("symtest_rdynamic"), debug);
  EXPECT_EQ(find_debug_file(*file, options.debug_root), std::nullopt);
  fs::remove_all(dir);
}

TEST(SymbolTable, MiniDebugInfo) {
  if (!UBT_HAVE_MINIDEBUG)
    GTEST_SKIP() << "objcopy or xz is not installed";
  auto file = ElfFile::open(prog("symtest_minidebug"));
  ASSERT_TRUE(file);
  ASSERT_NE(file->section(".gnu_debugdata"), nullptr);
  EXPECT_EQ(file->section(".symtab"), nullptr);
  SymbolLoadOptions options;
  options.debug_root = "/nonexistent";
  SymbolTable t = load(prog("symtest_minidebug"), options);
  SymbolTable full = load(prog("symtest_pie"));
  const ElfSymbol *s = only_function(t, "ubt_static_helper");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->vaddr, only_function(full, "ubt_static_helper")->vaddr);
}

TEST(SymbolTable, DebuglinkCrc) {
  const std::string check = "123456789";
  EXPECT_EQ(debuglink_crc32(reinterpret_cast<const uint8_t *>(check.data()),
                            check.size()),
            0xcbf43926u);
}

TEST(SymbolTable, LibcFunctions) {
  auto libc = resolve_binary("libc");
  if (!libc)
    GTEST_SKIP() << libc.error();
  SymbolTable t = load((*libc)[0].path);
  auto nm = run_command({"nm", "-D", "--defined-only", (*libc)[0].path});
  ASSERT_EQ(nm.status, 0);
  // malloc is a plain function; memcpy is chosen at load time (IFUNC).
  const auto malloc = t.functions_named("malloc");
  ASSERT_FALSE(malloc.empty());
  EXPECT_EQ(malloc[0]->type, SymbolType::Function);
  bool memcpy_ifunc = false;
  for (const ElfSymbol *s : t.functions_named("memcpy"))
    memcpy_ifunc |= s->type == SymbolType::IndirectFunction;
  EXPECT_TRUE(memcpy_ifunc);
  // A name only libc's separate debug file has (libc6-dbg).
  auto file = ElfFile::open((*libc)[0].path);
  if (find_debug_file(*file))
    EXPECT_FALSE(t.functions_named("malloc_consolidate").empty());
}
