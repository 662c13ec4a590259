// -f folded (backends/output/folded_output.h) on stacks as stack_text()
// prints them in every stack mode, including what a live trace here rarely
// shows: inlined frames, source lines, unknown addresses, unwind failures.
// The stack text comes from the real printer; only the symbols are a table
// (Symbolizer is the documented seam for formatting without a process).
// Whole traces through -f folded are in cli_folded.test.
#include "backends/output/folded_output.h"
#include "backends/output/symbols_text.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sstream>

namespace ubtrace::output {
namespace {

using Kind = runtime::ValueType::Kind;

class TableSymbols : public Symbolizer {
public:
  std::vector<SymbolFrame> user(uint64_t addr, int64_t) override {
    switch (addr) {
    case 0x1010: // `leaf` inlined into `handler`
      return {{"leaf", 0, "/bin/app", "leaf.h", 7, true},
              {"handler", 0x30, "/bin/app", "app.c", 52, false}};
    case 0x2000:
      return {{"main", 0x91, "/bin/app", "app.c", 80, false}};
    case 0x3000:
      return {{"operator+(A const&, A const&)", 4, "/bin/app", "", 0, false}};
    case 0x4000:
      return {{"a;b", 1, "/bin/app", "", 0, false}};
    default:
      return {};
    }
  }
  std::vector<SymbolFrame> kernel(uint64_t) override { return {}; }
};

runtime::ValueType ustack_type(uint8_t mode, uint32_t limit = 6) {
  runtime::ValueType t;
  t.kind = Kind::UStack;
  t.stack_limit = limit;
  t.stack_mode = mode;
  t.size = 8 * (limit + 2);
  return t;
}

// The stored bytes of a stack: count, addresses (innermost first), pid.
std::vector<uint8_t> stack_bytes(std::vector<uint64_t> addrs,
                                 uint32_t limit = 6) {
  std::vector<uint8_t> b(8 * (limit + 2), 0);
  uint64_t n = addrs.size();
  std::memcpy(b.data(), &n, 8);
  for (size_t i = 0; i < addrs.size(); i++)
    std::memcpy(b.data() + 8 * (i + 1), &addrs[i], 8);
  return b;
}

std::string printed_stack(uint8_t mode, std::vector<uint64_t> addrs,
                          bool debug_info = false) {
  TableSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  ctx.show_debug_info = debug_info;
  auto bytes = stack_bytes(std::move(addrs));
  return stack_text(ustack_type(mode), bytes, ctx);
}

std::string joined(const std::vector<std::string> &frames) {
  std::string s;
  for (size_t i = 0; i < frames.size(); i++)
    s += (i ? ";" : "") + frames[i];
  return s;
}

TEST(FoldedStacks, BpftraceModeRootFirstWithoutOffsets) {
  auto text = printed_stack(0, {0x1010, 0x2000});
  EXPECT_EQ(joined(stack_frames(text)), "main;handler;leaf");
}

TEST(FoldedStacks, SourceLinesAreDropped) {
  auto text = printed_stack(0, {0x1010, 0x2000}, true);
  ASSERT_NE(text.find("@app.c:52"), std::string::npos) << text;
  EXPECT_EQ(joined(stack_frames(text)), "main;handler;leaf");
}

TEST(FoldedStacks, PerfModeDropsAddressAndModule) {
  auto text = printed_stack(1, {0x1010, 0x2000});
  ASSERT_NE(text.find("(/bin/app)"), std::string::npos) << text;
  EXPECT_EQ(joined(stack_frames(text)), "main;handler;leaf");
}

TEST(FoldedStacks, RawModeKeepsAddresses) {
  auto text = printed_stack(2, {0x1010, 0x2000});
  EXPECT_EQ(joined(stack_frames(text)), "2000;1010");
}

TEST(FoldedStacks, UnknownAddressesStayHex) {
  auto text = printed_stack(0, {0x5555, 0x2000});
  EXPECT_EQ(joined(stack_frames(text)), "main;0x5555");
}

TEST(FoldedStacks, UnwindFailureIsUnknown) {
  auto text = printed_stack(0, {0x2000, UINT64_MAX});
  EXPECT_EQ(joined(stack_frames(text)), "[unknown];main");
}

TEST(FoldedStacks, OperatorPlusKeepsItsName) {
  auto text = printed_stack(0, {0x3000});
  EXPECT_EQ(joined(stack_frames(text)), "operator+(A const&, A const&)");
}

TEST(FoldedStacks, SemicolonsInNamesCannotSplitFrames) {
  auto text = printed_stack(0, {0x4000, 0x2000});
  EXPECT_EQ(joined(stack_frames(text)), "main;a:b");
}

PrintedMap count_map(std::vector<std::pair<Value, int64_t>> entries) {
  PrintedMap m;
  m.name = "@calls";
  for (auto &[k, v] : entries)
    m.entries.push_back({k, Value::of_int(v), std::nullopt});
  return m;
}

TEST(FoldedMaps, EqualStacksMergeAndLinesSort) {
  // Two call sites in `handler` (different offsets) fold to one line.
  TableSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  auto s1 = stack_bytes({0x1010, 0x2000});
  auto s2 = stack_bytes({0x2000});
  Value a = Value::of_string(stack_text(ustack_type(0), s1, ctx));
  Value b = Value::of_string(stack_text(ustack_type(1), s1, ctx));
  Value c = Value::of_string(stack_text(ustack_type(0), s2, ctx));
  auto m = count_map({{a, 3}, {c, 1}, {b, 4}});
  ASSERT_TRUE(is_foldable(m));
  EXPECT_EQ(folded_text(m), "main 1\nmain;handler;leaf 7\n");
}

TEST(FoldedMaps, TupleKeysGiveFramesInKeyOrder) {
  TableSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  auto s = stack_bytes({0x2000});
  Value key =
      Value::of_tuple({Value::of_string("nginx"), Value::of_uint(7),
                       Value::of_string(stack_text(ustack_type(0), s, ctx))});
  EXPECT_EQ(folded_text(count_map({{key, 2}})), "nginx;7;main 2\n");
}

TEST(FoldedMaps, ScalarMapsUseTheirNameAndNonPositiveCountsGo) {
  PrintedMap m = count_map({{Value::none(), 5}});
  m.scalar = true;
  EXPECT_EQ(folded_text(m), "@calls 5\n");
  EXPECT_EQ(folded_text(count_map(
                {{Value::of_string("x"), 0}, {Value::of_string("y"), -3}})),
            "");
}

TEST(FoldedMaps, HistogramsAreNotFoldable) {
  PrintedMap m;
  m.name = "@h";
  m.shape = PrintedMap::Shape::Hist;
  EXPECT_FALSE(is_foldable(m));
  PrintedMap s = count_map({{Value::of_string("x"), 1}});
  s.entries[0].value = Value::of_string("text");
  EXPECT_FALSE(is_foldable(s));
}

TEST(FoldedOutput, MapsOnOutEverythingElseOnErr) {
  std::ostringstream out, err;
  FoldedOutput f(out, err);
  f.attached_probes(2);
  f.printf("hello\n");
  f.map(count_map({{Value::of_string("add"), 4}}));
  PrintedMap h;
  h.name = "@h";
  h.shape = PrintedMap::Shape::Hist;
  f.map(h);
  f.end();
  EXPECT_EQ(out.str(), "add 4\n");
  EXPECT_EQ(err.str(), "Attached 2 probes\nhello\n");
}

} // namespace
} // namespace ubtrace::output
