#include "runtime/gpu/ptx_lexer.h"
#include "runtime/gpu/ptx_module.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ubtrace::runtime::gpu {
namespace {

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  PtxLexer lex(text);
  for (PtxToken t = lex.next(); t.kind != PtxTokenKind::End; t = lex.next())
    out.emplace_back(t.text);
  return out;
}

TEST(PtxLexer, SplitsPtxIntoTokensAndSkipsComments) {
  EXPECT_EQ(words("@!%p1 bra $L__BB0_2; // done\n"
                  "ld.param.u64 %rd1, [k_param_3+8]; /* a\n b */ mov.u32 "
                  "%r1, %ctaid.x;"),
            (std::vector<std::string>{"@",
                                      "!",
                                      "%p1",
                                      "bra",
                                      "$L__BB0_2",
                                      ";",
                                      "ld.param.u64",
                                      "%rd1",
                                      ",",
                                      "[",
                                      "k_param_3",
                                      "+",
                                      "8",
                                      "]",
                                      ";",
                                      "mov.u32",
                                      "%r1",
                                      ",",
                                      "%ctaid.x",
                                      ";"}));
  EXPECT_EQ(
      words("$L1: ld.global.L2::cache_hint.f32 %f1, [%rd1];"),
      (std::vector<std::string>{"$L1", ":", "ld.global.L2::cache_hint.f32",
                                "%f1", ",", "[", "%rd1", "]", ";"}));
  EXPECT_EQ(words(".file 1 \"/a b/c.cu\""),
            (std::vector<std::string>{".file", "1", "\"/a b/c.cu\""}));
}

TEST(PtxLexer, KnowsOffsetsAndLineStarts) {
  std::string_view text = ".version 9.0\n.target sm_90, debug";
  PtxLexer lex(text);
  PtxToken v = lex.next();
  EXPECT_TRUE(v.starts_line);
  PtxToken n = lex.next();
  EXPECT_EQ(n.kind, PtxTokenKind::Number);
  EXPECT_EQ(n.offset, 9u);
  EXPECT_FALSE(n.starts_line);
  PtxToken t = lex.next();
  EXPECT_TRUE(t.starts_line);
  EXPECT_EQ(text.substr(t.offset, t.text.size()), ".target");
}

constexpr std::string_view kModule = R"(//
// comment header
//
.version 8.5
.target sm_90a, debug
.address_size 64

.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.shared .align 8 .u64 a, b;
.const .align 4 .u32 limits[2] = {0, 1};

.func (.param .b32 r) helper(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	st.param.b32 [r], %r1;
	ret;
}

.weak .entry kern(
	.param .u64 .ptr .global .align 16 kern_p0,
	.param .align 4 .b8 kern_p1[12],
	.param .f32 kern_p2
)
.maxntid 128, 1, 1
.minnctapersm 2
{
	.reg .pred %p<3>;
	.local .align 4 .b8 scratch[16];
	.loc 1 10 3
$L_head:
	setp.eq.u32 %p1, %r1, 0;
	@%p1 ret;
	{
	.reg .pred inner;
	@!inner exit;
	}
	ret.uni;
}
.section .debug_str
{
.b8 97,0
}
)";

TEST(PtxModule, ReadsTheHeader) {
  auto m = parse_ptx(kModule);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->version_major, 8u);
  EXPECT_EQ(m->version_minor, 5u);
  EXPECT_EQ(kModule.substr(m->version_begin, m->version_end - m->version_begin),
            "8.5");
  EXPECT_EQ(m->target, (std::vector<std::string_view>{"sm_90a", "debug"}));
  EXPECT_EQ(m->target_sm(), 90u);
  EXPECT_EQ(m->address_size, 64u);
  EXPECT_EQ(kModule.substr(m->header_end - 16, 16), ".address_size 64");
}

TEST(PtxModule, ListsModuleScopeItemsWithTheirNames) {
  auto m = parse_ptx(kModule);
  ASSERT_TRUE(m) << m.error();
  std::vector<std::pair<PtxItemKind, std::vector<std::string_view>>> items;
  for (const PtxItem &item : m->items)
    items.emplace_back(item.kind, item.names);
  using K = PtxItemKind;
  using N = std::vector<std::string_view>;
  EXPECT_EQ(items, (std::vector<std::pair<K, N>>{
                       {K::Version, {}},
                       {K::Target, {}},
                       {K::AddressSize, {}},
                       {K::Function, {"vprintf"}},
                       {K::Variable, {"table"}},
                       {K::Variable, {"a", "b"}},
                       {K::Variable, {"limits"}},
                       {K::Function, {"helper"}},
                       {K::Function, {"kern"}},
                       {K::Section, {}},
                   }));
  EXPECT_TRUE(m->items[3].is_extern);
  // Item ranges cover exactly their text.
  const PtxItem &table = m->items[4];
  EXPECT_EQ(kModule.substr(table.begin, table.end - table.begin),
            ".global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};");
}

TEST(PtxModule, ParsesFunctionSignatures) {
  auto m = parse_ptx(kModule);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->functions.size(), 3u);
  const PtxFunction &vprintf = m->functions[0];
  EXPECT_FALSE(vprintf.has_body);
  EXPECT_EQ(vprintf.linkage, PtxLinkage::Extern);
  ASSERT_EQ(vprintf.returns.size(), 1u);
  EXPECT_EQ(vprintf.returns[0].name, "func_retval0");
  EXPECT_EQ(vprintf.params.size(), 2u);

  const PtxFunction *kern = m->find_function("kern");
  ASSERT_NE(kern, nullptr);
  EXPECT_TRUE(kern->is_entry);
  EXPECT_EQ(kern->linkage, PtxLinkage::Weak);
  ASSERT_EQ(kern->params.size(), 3u);
  EXPECT_EQ(kern->params[0].name, "kern_p0");
  EXPECT_EQ(kern->params[0].type, ".u64");
  EXPECT_EQ(kern->params[0].align, 16u);
  EXPECT_FALSE(kern->params[0].is_array());
  EXPECT_EQ(kern->params[1].name, "kern_p1");
  EXPECT_EQ(kern->params[1].type, ".b8");
  EXPECT_EQ(kern->params[1].align, 4u);
  EXPECT_EQ(kern->params[1].array_size, 12u);
  EXPECT_EQ(kern->params[2].type, ".f32");
  EXPECT_EQ(kModule[kern->body_open], '{');
  EXPECT_EQ(kModule[kern->body_close], '}');
}

TEST(PtxModule, FindsWhereCodeStartsAndEveryExit) {
  auto m = parse_ptx(kModule);
  ASSERT_TRUE(m) << m.error();
  const PtxFunction *kern = m->find_function("kern");
  ASSERT_NE(kern, nullptr);
  // After .reg/.local/.loc, at the loop-head label.
  EXPECT_EQ(kModule.substr(kern->code_begin, 8), "$L_head:");
  ASSERT_EQ(kern->exits.size(), 3u);
  EXPECT_EQ(kern->exits[0].guard, "@%p1");
  EXPECT_EQ(kern->exits[0].opcode, "ret");
  EXPECT_EQ(kern->exits[0].depth, 1);
  EXPECT_EQ(kModule.substr(kern->exits[0].offset, 9), "@%p1 ret;");
  EXPECT_EQ(kern->exits[1].guard, "@!inner");
  EXPECT_EQ(kern->exits[1].opcode, "exit");
  EXPECT_EQ(kern->exits[1].depth, 2);
  EXPECT_EQ(kern->exits[2].guard, "");
  EXPECT_EQ(kern->exits[2].opcode, "ret.uni");

  const PtxFunction *helper = m->find_function("helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_entry);
  EXPECT_EQ(kModule.substr(helper->code_begin, 12), "ld.param.u32");
  EXPECT_EQ(helper->exits.size(), 1u);
}

TEST(PtxModule, ReportsTheLineOfWhatItCannotDelimit) {
  auto unclosed = parse_ptx(".version 9.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry k()\n{\n\tret;\n");
  ASSERT_FALSE(unclosed);
  EXPECT_EQ(unclosed.error(), "PTX line 5: body of k is not closed");

  auto no_semicolon =
      parse_ptx(".version 9.0\n.target sm_90\n.global .u32 x\n");
  ASSERT_FALSE(no_semicolon);
  EXPECT_EQ(no_semicolon.error(), "PTX line 3: declaration has no closing ';'");

  auto bad_version = parse_ptx(".version nine\n");
  ASSERT_FALSE(bad_version);
  EXPECT_EQ(bad_version.error(), "PTX line 1: bad .version");

  auto nameless = parse_ptx(".version 9.0\n.target sm_90\n.entry (\n");
  EXPECT_FALSE(nameless);
}

TEST(PtxModule, EmptyBodiesStartAndEndAtTheirBrace) {
  std::string_view text = ".version 9.0\n.target sm_90\n.entry e()\n{\n}\n";
  auto m = parse_ptx(text);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->functions.size(), 1u);
  EXPECT_EQ(m->functions[0].code_begin, m->functions[0].body_close);
  EXPECT_TRUE(m->functions[0].exits.empty());
}

} // namespace
} // namespace ubtrace::runtime::gpu
