// Symbolisation of addresses of live processes, and after they exited.
#include "runtime/symbols/debug_file.h"
#include "runtime/symbols/symbolizer.h"
#include "tests/unit/symbols/test_support.h"

#include <csignal>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::Child;
using ubtrace::symbols_test::parse_addresses;
using ubtrace::symbols_test::prog;

namespace {

std::string describe(const std::vector<SymbolizedFrame> &frames) {
  std::string s;
  for (const auto &f : frames)
    s += (f.inlined ? "[inlined] " : "") + f.name + "+" +
         std::to_string(f.offset) + "@" + f.file + ":" +
         std::to_string(f.line) + "; ";
  return s;
}

// The line of `marker` in a test program's source.
uint32_t source_line(const std::string &file, const std::string &marker) {
  std::ifstream in(std::string(UBT_SYMBOLS_SOURCE) + "/" + file);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos)
      return n;
  return 0;
}

} // namespace

TEST(Symbolizer, LiveProcessFunctionsAndOffsets) {
  const std::string path = prog("symtest_pie");
  Child child(path);
  ASSERT_TRUE(child.started());
  auto at = parse_addresses(child.read_until_ready());
  Symbolizer s;
  ASSERT_TRUE(s.snapshot(child.pid()));
  for (const char *fn :
       {"ubt_add", "ubt_static_helper", "ubt_read_one", "main"}) {
    auto frames = s.symbolize(child.pid(), at[fn]);
    ASSERT_EQ(frames.size(), 1u) << fn;
    EXPECT_EQ(frames[0].name, fn);
    EXPECT_EQ(frames[0].offset, 0u);
    EXPECT_EQ(frames[0].module, std::filesystem::canonical(path).string());
    EXPECT_FALSE(frames[0].inlined);
  }
  auto plus = s.symbolize(child.pid(), at["ubt_add"] + 2);
  ASSERT_EQ(plus.size(), 1u);
  EXPECT_EQ(plus[0].offset, 2u);
  // A return address: inside main, past its start.
  auto ret = s.symbolize(child.pid(), at["return_address"]);
  ASSERT_EQ(ret.size(), 1u);
  EXPECT_EQ(ret[0].name, "main");
  EXPECT_EQ(ret[0].offset, at["return_address"] - at["main"]);
  // The alias and its target share code; the shorter name is printed.
  EXPECT_EQ(s.symbolize(child.pid(), at["ubt_alias_target"])[0].name,
            "ubt_alias");
  // Not code of a file: unknown (printed in hex by the caller).
  uint64_t stack_addr = reinterpret_cast<uint64_t>(&s);
  EXPECT_TRUE(s.symbolize(child.pid(), 8).empty());
  (void)stack_addr;

  auto loc = s.locate(child.pid(), at["ubt_add"]);
  ASSERT_TRUE(loc);
  auto elf = ElfFile::open(path);
  EXPECT_EQ(loc->build_id, elf->build_id());
  EXPECT_EQ(elf->offset_to_vaddr(loc->file_offset), loc->vaddr);
  child.finish();
}

TEST(Symbolizer, WorksAfterTheProcessExited) {
  Child child(prog("symtest_lib"));
  ASSERT_TRUE(child.started());
  auto at = parse_addresses(child.read_until_ready());
  const pid_t pid = child.pid();
  auto snapshot = AddressSpace::snapshot(pid);
  ASSERT_TRUE(snapshot);
  child.finish();
  ASSERT_NE(::kill(pid, 0), 0); // gone

  Symbolizer s;
  s.add_snapshot(std::move(*snapshot));
  auto frames = s.symbolize(pid, at["ubt_lib_other"] + 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].name, "ubt_lib_other");
  EXPECT_EQ(frames[0].offset, 1u);
  EXPECT_EQ(frames[0].module,
            std::filesystem::canonical(prog("libubtsym.so")).string());
  // Without a snapshot, a dead process's addresses are unknown.
  Symbolizer fresh;
  EXPECT_TRUE(fresh.symbolize(pid, at["ubt_lib_other"]).empty());
}

TEST(Symbolizer, Demangling) {
  Child child(prog("symtest_cpp"));
  ASSERT_TRUE(child.started());
  auto at = parse_addresses(child.read_until_ready());
  Symbolizer on;
  SymbolizerOptions raw_options;
  raw_options.demangle = false;
  Symbolizer raw(raw_options);
  EXPECT_EQ(on.symbolize(child.pid(), at["Widget::bar(int)"])[0].name,
            "ubt::Widget::bar(int)");
  EXPECT_EQ(raw.symbolize(child.pid(), at["Widget::bar(int)"])[0].name,
            "_ZN3ubt6Widget3barEi");
  EXPECT_EQ(on.symbolize(child.pid(), at["twice<double>"])[0].name,
            "double ubt::twice<double>(double)");
  child.finish();
}

TEST(Symbolizer, SourceLinesAndInlinedFrames) {
  const std::string path = prog("symtest_pie");
  Child child(path);
  ASSERT_TRUE(child.started());
  auto at = parse_addresses(child.read_until_ready());
  SymbolizerOptions options;
  options.source_lines = true;
  Symbolizer s(options);

  auto add = s.symbolize(child.pid(), at["ubt_add"]);
  ASSERT_EQ(add.size(), 1u) << describe(add);
  EXPECT_TRUE(add[0].file.ends_with("progs/symtest.c")) << describe(add);
  // Its first instruction computes the sum (at -O1 there is no prologue).
  EXPECT_EQ(add[0].line, source_line("progs/symtest.c", "UBT_ADD_BODY"));

  // Code inlined into ubt_outer: the inlined function first, at its line,
  // then ubt_outer at the call site.
  auto inl = s.symbolize(child.pid(), at["inlined_pc"]);
  ASSERT_EQ(inl.size(), 2u) << describe(inl);
  EXPECT_TRUE(inl[0].inlined);
  EXPECT_EQ(inl[0].name, "ubt_inlined_here");
  EXPECT_EQ(inl[0].line, source_line("progs/symtest.c", "UBT_INLINED_LINE"));
  EXPECT_FALSE(inl[1].inlined);
  EXPECT_EQ(inl[1].name, "ubt_outer");
  EXPECT_LT(inl[1].offset, 64u);
  EXPECT_EQ(inl[1].line, source_line("progs/symtest.c", "UBT_CALL_SITE"));
  child.finish();
}

TEST(Symbolizer, FileAddressesWithoutAProcess) {
  auto elf = ElfFile::open(prog("symtest_nopie"));
  ASSERT_TRUE(elf);
  auto table = SymbolTable::load(*elf);
  ASSERT_TRUE(table);
  const ElfSymbol *add = table->functions_named("ubt_add")[0];
  Symbolizer s;
  auto frames = s.symbolize_file_vaddr(prog("symtest_nopie"), add->vaddr + 3);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].name, "ubt_add");
  EXPECT_EQ(frames[0].offset, 3u);
}

TEST(Symbolizer, LibcOfThisProcess) {
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (!libc)
    GTEST_SKIP() << "libc.so.6 is not loaded here";
  auto malloc_at = reinterpret_cast<uint64_t>(dlsym(libc, "malloc"));
  dlclose(libc);
  SymbolizerOptions options;
  options.source_lines = true;
  Symbolizer s(options);
  auto frames = s.symbolize(::getpid(), malloc_at + 1);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().name, "malloc");
  EXPECT_EQ(frames.back().offset, 1u);
  // With libc's debug file installed (libc6-dbg), the line is known too.
  auto elf = ElfFile::open(frames.back().module);
  ASSERT_TRUE(elf);
  if (find_debug_file(*elf))
    EXPECT_TRUE(frames.back().file.ends_with("malloc.c")) << frames.back().file;
}

namespace {

// A mapping of `path` at [start, start + 4096), as /proc would list it.
Mapping file_at(const std::string &path, uint64_t start) {
  struct stat st{};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  Mapping m;
  m.start = start;
  m.end = start + 4096;
  m.readable = m.executable = true;
  m.dev_major = major(st.st_dev);
  m.dev_minor = minor(st.st_dev);
  m.inode = st.st_ino;
  m.path = path;
  return m;
}

// Forks a process that forks `depth` more below it, each waiting for its
// parent's death (PR_SET_PDEATHSIG) or SIGKILL; returns their pids, the
// deepest last.
std::vector<pid_t> fork_chain(int depth) {
  int fds[2];
  if (::pipe(fds) != 0)
    return {};
  pid_t first = ::fork();
  if (first == 0) {
    for (int level = 0;; ++level) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      pid_t self = ::getpid();
      (void)!::write(fds[1], &self, sizeof self);
      if (level == depth || ::fork() != 0)
        for (;;)
          ::pause();
    }
  }
  ::close(fds[1]);
  std::vector<pid_t> pids;
  pid_t p;
  while (pids.size() < size_t(depth) + 1 &&
         ::read(fds[0], &p, sizeof p) == sizeof p)
    pids.push_back(p);
  ::close(fds[0]);
  return pids;
}

} // namespace

// With several traced processes (-p A,B), a process without a snapshot of
// its own (not `own`) resolves through the traced process it descends
// from, found up its /proc parent chain; else through the first.
TEST(Symbolizer, ChildrenResolveThroughTheTracedProcessTheyDescendFrom) {
  const uint64_t at = 0x7e0000000000;
  auto chain = fork_chain(2); // B, B's child, B's grandchild
  auto loose = fork_chain(0); // this process's child
  ASSERT_EQ(chain.size(), 3u);
  ASSERT_EQ(loose.size(), 1u);
  const pid_t a = ::getpid(), b = chain[0];

  Symbolizer s;
  s.add_snapshot(AddressSpace::from_mappings(a, {file_at("/bin/true", at)}));
  s.add_snapshot(AddressSpace::from_mappings(b, {file_at("/bin/false", at)}));
  auto never_own = [](const AddressSpace &) { return false; };
  s.add_lineage(a, never_own);
  s.add_lineage(b, never_own);
  auto file_of = [&](pid_t pid) {
    auto loc = s.locate(pid, at + 16);
    return loc ? std::filesystem::path(loc->path).filename().string()
               : std::string("(none)");
  };
  EXPECT_EQ(file_of(chain[2]), "false"); // two levels below B
  EXPECT_EQ(file_of(chain[1]), "false");
  EXPECT_EQ(file_of(loose[0]), "true"); // below A
  EXPECT_EQ(file_of(b), "false");       // B is its own
  EXPECT_EQ(file_of(a), "true");
  for (pid_t p : {chain[0], loose[0]}) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
  // A process gone before its first lookup resolves through the first
  // parent that maps the address asked for (a fork of B that ended, asked
  // for an address only B maps), else through the first.
  EXPECT_EQ(file_of(4194000), "true"); // above any pid_max: no process
  s.add_snapshot(
      AddressSpace::from_mappings(b, {file_at("/bin/sh", at + 0x100000)}));
  auto loc = s.locate(4194001, at + 0x100010);
  ASSERT_TRUE(loc);
  EXPECT_EQ(std::filesystem::path(loc->path).filename(), "sh");
  EXPECT_FALSE(s.locate(4194002, at + 0x200010)); // nobody maps it
}
