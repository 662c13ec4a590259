#include "runtime/symbols/probe_resolver.h"
#include "tests/unit/symbols/test_support.h"

#include <Zydis/Zydis.h>
#include <gtest/gtest.h>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::prog;

namespace {

// Instruction starts of `code`, decoded with Zydis (what the CLI plugs in).
std::vector<uint64_t> instruction_starts(std::span<const uint8_t> code) {
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  std::vector<uint64_t> starts;
  uint64_t off = 0;
  ZydisDecodedInstruction insn;
  while (off < code.size() &&
         ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
             &decoder, nullptr, code.data() + off, code.size() - off, &insn))) {
    starts.push_back(off);
    off += insn.length;
  }
  return starts;
}

std::optional<bool> zydis_boundary(std::span<const uint8_t> code,
                                   uint64_t offset) {
  auto starts = instruction_starts(code);
  return std::find(starts.begin(), starts.end(), offset) != starts.end();
}

AttachRequest uprobe(const std::string &target, const std::string &function) {
  AttachRequest req;
  req.target = target;
  req.function = function;
  return req;
}

std::vector<std::string> names(const std::vector<ResolvedProbe> &probes) {
  std::vector<std::string> out;
  for (const auto &p : probes)
    out.push_back(p.function);
  return out;
}

} // namespace

TEST(ProbeResolver, LiteralFunction) {
  ProbeResolver r;
  const std::string path = prog("symtest_pie");
  auto probes = r.expand(uprobe(path, "ubt_add"));
  ASSERT_TRUE(probes) << probes.error();
  ASSERT_EQ(probes->size(), 1u);
  const ResolvedProbe &p = (*probes)[0];
  EXPECT_EQ(p.binary, path);
  EXPECT_EQ(p.binary_kind, ElfKind::SharedObject);
  EXPECT_EQ(p.name, "uprobe:" + path + ":ubt_add");
  EXPECT_EQ(p.vaddr, p.function_vaddr);
  EXPECT_GT(p.function_size, 0u);
  auto elf = ElfFile::open(path);
  EXPECT_EQ(elf->vaddr_to_offset(p.vaddr), p.file_offset);
}

TEST(ProbeResolver, Wildcards) {
  ProbeResolver r;
  const std::string path = prog("symtest_pie");
  auto star = r.expand(uprobe(path, "ubt_read*"));
  ASSERT_TRUE(star) << star.error();
  EXPECT_EQ(names(*star), (std::vector<std::string>{
                              "ubt_read_one", "ubt_read_two", "ubt_reader"}));
  auto any = r.expand(uprobe(path, "ubt_read_???"));
  ASSERT_TRUE(any);
  EXPECT_EQ(names(*any),
            (std::vector<std::string>{"ubt_read_one", "ubt_read_two"}));
  auto cls = r.expand(uprobe(path, "ubt_read_[!t]*"));
  ASSERT_TRUE(cls);
  EXPECT_EQ(names(*cls), std::vector<std::string>{"ubt_read_one"});
}

TEST(ProbeResolver, AliasesMergeIntoOneProbe) {
  const std::string path = prog("symtest_pie");
  ProbeResolver merged;
  auto probes = merged.expand(uprobe(path, "ubt_alias*"));
  ASSERT_TRUE(probes) << probes.error();
  ASSERT_EQ(probes->size(), 1u);
  EXPECT_EQ((*probes)[0].function, "ubt_alias");
  EXPECT_EQ((*probes)[0].aliases, std::vector<std::string>{"ubt_alias_target"});

  ProbeResolverOptions options;
  options.merge_aliases = false;
  ProbeResolver separate(options);
  auto both = separate.expand(uprobe(path, "ubt_alias*"));
  ASSERT_TRUE(both);
  EXPECT_EQ(names(*both),
            (std::vector<std::string>{"ubt_alias", "ubt_alias_target"}));
  EXPECT_EQ((*both)[0].vaddr, (*both)[1].vaddr);
}

TEST(ProbeResolver, FunctionOffsets) {
  const std::string path = prog("symtest_pie");
  ProbeResolverOptions options;
  options.instruction_boundary = zydis_boundary;
  ProbeResolver r(options);
  auto base = r.expand(uprobe(path, "ubt_add"));
  ASSERT_TRUE(base);
  const ResolvedProbe &fn = (*base)[0];
  auto elf = ElfFile::open(path);
  auto code = elf->read_at_vaddr(fn.function_vaddr, fn.function_size);
  ASSERT_TRUE(code);
  auto starts = instruction_starts(*code);
  ASSERT_GE(starts.size(), 2u);

  AttachRequest good = uprobe(path, "ubt_add");
  good.offset = starts[1];
  auto at = r.expand(good);
  ASSERT_TRUE(at) << at.error();
  EXPECT_EQ((*at)[0].vaddr, fn.vaddr + starts[1]);
  EXPECT_EQ((*at)[0].file_offset, fn.file_offset + starts[1]);
  EXPECT_EQ((*at)[0].offset, starts[1]);
  EXPECT_EQ((*at)[0].name,
            "uprobe:" + path + ":ubt_add+" + std::to_string(starts[1]));

  // Inside the first instruction (when it is longer than a byte).
  if (starts[1] > 1) {
    AttachRequest middle = uprobe(path, "ubt_add");
    middle.offset = 1;
    auto bad = r.expand(middle);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().find("into middle of instruction"), std::string::npos)
        << bad.error();
  }

  AttachRequest past = uprobe(path, "ubt_add");
  past.offset = fn.function_size;
  auto outside = r.expand(past);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error(),
            "Offset outside the function bounds ('ubt_add' size is " +
                std::to_string(fn.function_size) + ")");

  AttachRequest ret = good;
  ret.type = UserProbeType::Uretprobe;
  auto no_ret = r.expand(ret);
  ASSERT_FALSE(no_ret);
  EXPECT_NE(no_ret.error().find("uretprobes can not be attached to a function "
                                "offset"),
            std::string::npos);
}

TEST(ProbeResolver, Addresses) {
  const std::string path = prog("symtest_nopie");
  ProbeResolver r;
  auto fn = r.expand(uprobe(path, "ubt_add"));
  ASSERT_TRUE(fn);
  AttachRequest req;
  req.target = path;
  req.address = (*fn)[0].vaddr + 1;
  auto at = r.expand(req);
  ASSERT_TRUE(at) << at.error();
  EXPECT_EQ((*at)[0].function, "ubt_add");
  EXPECT_EQ((*at)[0].offset, 1u);
  EXPECT_EQ((*at)[0].file_offset, (*fn)[0].file_offset + 1);
  EXPECT_EQ((*at)[0].name,
            "uprobe:" + path + ":" + std::to_string(*req.address));

  req.address = 0x10; // no function there
  auto none = r.expand(req);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), "Could not resolve address: " + path + ":0x10");

  AttachRequest glob = req;
  glob.target = prog("symtest_*");
  EXPECT_FALSE(r.expand(glob));
}

TEST(ProbeResolver, StrippedAddressNeedsUnsafe) {
  if (!UBT_HAVE_OBJCOPY)
    GTEST_SKIP() << "objcopy is not installed";
  const std::string path = prog("symtest_stripped");
  ProbeResolver full;
  auto helper =
      full.expand(uprobe(prog("symtest_rdynamic"), "ubt_static_helper"));
  ASSERT_TRUE(helper);
  AttachRequest req;
  req.target = path;
  req.address = (*helper)[0].vaddr;
  ProbeResolverOptions no_debug;
  no_debug.binaries.ld_library_path = "";
  auto strict_cache = std::make_shared<BinaryCache>(
      SymbolLoadOptions{.debug_files = false, .debug_root = "/nonexistent"});
  ProbeResolver strict(no_debug, strict_cache);
  EXPECT_FALSE(strict.expand(req));
  ProbeResolverOptions unsafe = no_debug;
  unsafe.allow_unresolved_address = true;
  ProbeResolver lenient(unsafe, strict_cache);
  auto ok = lenient.expand(req);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ((*ok)[0].function, "");
  EXPECT_EQ((*ok)[0].file_offset, (*helper)[0].file_offset);
}

TEST(ProbeResolver, Errors) {
  ProbeResolver r;
  const std::string path = prog("symtest_pie");
  auto missing = r.expand(uprobe(path, "ubt_nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "could not resolve symbol: " + path + ":ubt_nope");
  auto no_match = r.expand(uprobe(path, "ubt_nope*"));
  ASSERT_FALSE(no_match);
  EXPECT_EQ(no_match.error(), "no function matches '" + path + ":ubt_nope*'");
  auto no_bin = r.expand(uprobe("libubtrace_missing", "f"));
  ASSERT_FALSE(no_bin);
  EXPECT_NE(no_bin.error().find("no binary or library named"),
            std::string::npos);
}

TEST(ProbeResolver, GlobTargets) {
  ProbeResolver r;
  auto probes = r.expand(uprobe(prog("symtest_*pie"), "ubt_add"));
  ASSERT_TRUE(probes) << probes.error();
  std::vector<std::string> binaries;
  for (const auto &p : *probes)
    binaries.push_back(p.binary);
  EXPECT_EQ(binaries, (std::vector<std::string>{prog("symtest_nopie"),
                                                prog("symtest_pie")}));
}

TEST(ProbeResolver, Uretprobe) {
  ProbeResolver r;
  AttachRequest req = uprobe(prog("symtest_pie"), "ubt_add");
  req.type = UserProbeType::Uretprobe;
  auto probes = r.expand(req);
  ASSERT_TRUE(probes);
  EXPECT_EQ((*probes)[0].name, "uretprobe:" + prog("symtest_pie") + ":ubt_add");
}
