// Maps in text and JSON: order, keys, every aggregation, top and div.
#include "backends/output/json_output.h"
#include "backends/output/text_output.h"
#include "tests/unit/output/map_builder.h"

#include <gtest/gtest.h>
#include <sstream>

namespace ubtrace::output::test {
namespace {

using runtime::AggKind;

TEST(MapPrint, CountMapSortedByValueThenKey) {
  MapBuilder m(map_spec("@c", AggKind::Count, string_type(8), u64()));
  m.add(str_bytes("zz", 8), le64(3))
      .add(str_bytes("b", 8), le64(2))
      .add(str_bytes("a", 8), le64(2))
      .add(str_bytes("c", 8), le64(1));
  PrintedMap pm = m.build();
  EXPECT_EQ(map_text(pm), "@c[c]: 1\n@c[a]: 2\n@c[b]: 2\n@c[zz]: 3\n");
  EXPECT_EQ(map_json(pm), "{\"type\": \"map\", \"data\": {\"@c\": "
                          "{\"c\": 1, \"a\": 2, \"b\": 2, \"zz\": 3}}}");
}

TEST(MapPrint, ScalarMaps) {
  MapBuilder m(map_spec("@scalar", AggKind::None, no_key(), i64()));
  m.add({}, le64(5));
  EXPECT_EQ(map_text(m.build()), "@scalar: 5\n");
  EXPECT_EQ(map_json(m.build()),
            "{\"type\": \"map\", \"data\": {\"@scalar\": 5}}");

  MapBuilder s(
      map_spec("@scalar_str", AggKind::None, no_key(), string_type(16)));
  s.add({}, str_bytes("a b \n d e", 16));
  EXPECT_EQ(map_text(s.build()), "@scalar_str: a b \n d e\n");
  EXPECT_EQ(map_json(s.build()), "{\"type\": \"map\", \"data\": "
                                 "{\"@scalar_str\": \"a b \\n d e\"}}");
}

TEST(MapPrint, SumSignedAndUnsigned) {
  ValueType sv = i64();
  MapBuilder m(map_spec("@s", AggKind::Sum, i64(), sv));
  m.add(le64(3), le64(10))
      .add(le64(1), le64(static_cast<uint64_t>(-5)))
      .add(le64(2), le64(7));
  EXPECT_EQ(map_text(m.build()), "@s[1]: -5\n@s[2]: 7\n@s[3]: 10\n");
  MapBuilder u(map_spec("@u", AggKind::Sum, i64(), u64()));
  u.add(le64(1), le64(UINT64_MAX)).add(le64(2), le64(1));
  EXPECT_EQ(map_text(u.build()), "@u[2]: 1\n@u[1]: 18446744073709551615\n");
}

TEST(MapPrint, MinMaxSortAsUnsigned) {
  // bpftrace 0.26 orders min/max maps by the value read as uint64, so a
  // negative minimum sorts last. (0.17 sorted them signed: @mn[5] first.)
  MapBuilder m(map_spec("@mn", AggKind::Min, i64(), i64()));
  m.add(le64(5), pair_bytes(static_cast<uint64_t>(-3), 1))
      .add(le64(1), pair_bytes(4, 1))
      .add(le64(9), pair_bytes(0, 0)); // never set: prints 0
  EXPECT_EQ(map_text(m.build()), "@mn[9]: 0\n@mn[1]: 4\n@mn[5]: -3\n");
  MapBuilder x(map_spec("@mx", AggKind::Max, string_type(4), i64()));
  x.add(str_bytes("k", 4), pair_bytes(9, 1))
      .add(str_bytes("j", 4), pair_bytes(2, 1));
  EXPECT_EQ(map_text(x.build()), "@mx[j]: 2\n@mx[k]: 9\n");
  EXPECT_EQ(map_json(x.build()),
            "{\"type\": \"map\", \"data\": {\"@mx\": {\"j\": 2, \"k\": 9}}}");
}

TEST(MapPrint, AvgAndStats) {
  MapBuilder a(map_spec("@a", AggKind::Avg, i64(), i64()));
  a.add(le64(1), pair_bytes(30, 2)).add(le64(2), pair_bytes(3, 1));
  EXPECT_EQ(map_text(a.build()), "@a[2]: 3\n@a[1]: 15\n");
  EXPECT_EQ(map_json(a.build()),
            "{\"type\": \"stats\", \"data\": {\"@a\": {\"2\": 3, \"1\": 15}}}");
  // Signed averages truncate toward zero.
  MapBuilder n(map_spec("@n", AggKind::Avg, no_key(), i64()));
  n.add({}, pair_bytes(static_cast<uint64_t>(-7), 2));
  EXPECT_EQ(map_text(n.build()), "@n: -3\n");

  MapBuilder s(map_spec("@stats", AggKind::Stats, no_key(), i64()));
  s.add({}, pair_bytes(12, 2));
  EXPECT_EQ(map_text(s.build()),
            "@stats: { .count = 2, .average = 6, .total = 12 }\n");
  EXPECT_EQ(map_json(s.build()),
            "{\"type\": \"stats\", \"data\": {\"@stats\": "
            "{\"count\": 2, \"average\": 6, \"total\": 12}}}");
  MapBuilder k(map_spec("@stats", AggKind::Stats, string_type(8), i64()));
  k.add(str_bytes("zsh", 8), pair_bytes(10, 1))
      .add(str_bytes("curl", 8), pair_bytes(2, 1));
  EXPECT_EQ(map_json(k.build()),
            "{\"type\": \"stats\", \"data\": {\"@stats\": {"
            "\"curl\": {\"count\": 1, \"average\": 2, \"total\": 2}, "
            "\"zsh\": {\"count\": 1, \"average\": 10, \"total\": 10}}}}");
  EXPECT_EQ(map_text(k.build()),
            "@stats[curl]: { .count = 1, .average = 2, .total = 2 }\n"
            "@stats[zsh]: { .count = 1, .average = 10, .total = 10 }\n");
}

TEST(MapPrint, TopAndDivOnAvg) {
  // bpftrace's print_avg_map_args: avg 10, 20, 30, 40; print(@, 2, 10).
  MapBuilder m(map_spec("@", AggKind::Avg, string_type(8), i64()));
  m.add(str_bytes("a", 8), pair_bytes(10, 1))
      .add(str_bytes("b", 8), pair_bytes(20, 1))
      .add(str_bytes("c", 8), pair_bytes(30, 1))
      .add(str_bytes("d", 8), pair_bytes(40, 1));
  EXPECT_EQ(map_text(m.build(2, 10)), "@[c]: 3\n@[d]: 4\n");
  EXPECT_EQ(map_json(m.build(2, 10)),
            "{\"type\": \"stats\", \"data\": {\"@\": {\"c\": 3, \"d\": 4}}}");
  EXPECT_EQ(map_text(m.build(10, 10)), "@[a]: 1\n@[b]: 2\n@[c]: 3\n@[d]: 4\n");
}

TEST(MapPrint, DivOnStatsDividesOnlyTheAverage) {
  MapBuilder s(map_spec("@s", AggKind::Stats, no_key(), i64()));
  s.add({}, pair_bytes(100, 4));
  EXPECT_EQ(map_text(s.build(0, 5)),
            "@s: { .count = 4, .average = 5, .total = 100 }\n");
}

TEST(MapPrint, DivReachesIntegersInTupleValues) {
  MapBuilder t(map_spec("@t", AggKind::None, no_key(),
                        tuple_type({i64(), string_type(4)})));
  t.add({}, Packer().u64(25).str("x", 4).bytes());
  EXPECT_EQ(map_text(t.build(0, 10)), "@t: (2, x)\n");
}

std::vector<uint64_t> hist_with(std::initializer_list<int64_t> values) {
  std::vector<uint64_t> b(runtime::hist_buckets(0), 0);
  for (int64_t v : values)
    b[hist_bucket(v, 0)]++;
  return b;
}

runtime::MapSpec hist_spec(std::string name, ValueType key) {
  auto s = map_spec(std::move(name), AggKind::Hist, std::move(key), i64());
  s.value_size = runtime::hist_buckets(0) * 8;
  return s;
}

TEST(MapPrint, ScalarHistogram) {
  MapBuilder h(hist_spec("@hist", no_key()));
  h.add({}, buckets_bytes(hist_with({2, 1025})));
  PrintedMap pm = h.build();
  std::string text = map_text(pm);
  EXPECT_EQ(text.substr(0, 7), "@hist:\n");
  EXPECT_EQ(text.substr(text.size() - 3), "|\n\n");
  EXPECT_EQ(map_json(pm).rfind("{\"type\": \"hist\", \"data\": {\"@hist\": "
                               "[{\"min\": 2, \"max\": 3, \"count\": 1},",
                               0),
            0u);
  // zero(@hist): the entry stays, with no buckets to print.
  MapBuilder z(hist_spec("@hist", no_key()));
  z.add({}, buckets_bytes(hist_with({})));
  EXPECT_EQ(map_text(z.build()), "@hist:\n\n");
  EXPECT_EQ(map_json(z.build()),
            "{\"type\": \"hist\", \"data\": {\"@hist\": []}}");
}

TEST(MapPrint, KeyedHistogramsSortedByTotalCount) {
  // bpftrace's print_hist_with_top_arg: @[1]=hist(10), @[2]=hist(20),
  // @[3]=hist(30); print(@, 2).
  MapBuilder h(hist_spec("@", i64()));
  h.add(le64(3), buckets_bytes(hist_with({30})))
      .add(le64(1), buckets_bytes(hist_with({10})))
      .add(le64(2), buckets_bytes(hist_with({20})));
  EXPECT_EQ(map_json(h.build(2)),
            "{\"type\": \"hist\", \"data\": {\"@\": {\"2\": [{\"min\": 16, "
            "\"max\": 31, \"count\": 1}], \"3\": [{\"min\": 16, \"max\": 31, "
            "\"count\": 1}]}}}");
  EXPECT_EQ(map_json(h.build(10)),
            "{\"type\": \"hist\", \"data\": {\"@\": {\"1\": [{\"min\": 8, "
            "\"max\": 15, \"count\": 1}], \"2\": [{\"min\": 16, \"max\": 31, "
            "\"count\": 1}], \"3\": [{\"min\": 16, \"max\": 31, "
            "\"count\": 1}]}}}");
  MapBuilder k(hist_spec("@", string_type(8)));
  k.add(str_bytes("big", 8), buckets_bytes(hist_with({1, 1})))
      .add(str_bytes("small", 8), buckets_bytes(hist_with({1})));
  const std::string line = "[1]                    ";
  EXPECT_EQ(map_text(k.build()),
            "@[small]:\n" + line + "1 |" + std::string(52, '@') +
                "|\n\n"
                "@[big]:\n" +
                line + "2 |" + std::string(52, '@') + "|\n\n");
}

TEST(MapPrint, KeyedLinearHistogram) {
  auto spec = map_spec("@lk", AggKind::LHist,
                       tuple_type({i64(), string_type(4)}), i64());
  spec.lhist_min = 0;
  spec.lhist_max = 100;
  spec.lhist_step = 10;
  std::vector<uint64_t> b(runtime::lhist_buckets(0, 100, 10), 0);
  b[lhist_bucket(5, 0, 100, 10)] = 1;
  MapBuilder m(spec);
  m.add(Packer().u64(1).str("x", 4).bytes(), buckets_bytes(b));
  EXPECT_EQ(map_text(m.build()), "@lk[1, x]:\n[0, 10)                1 |" +
                                     std::string(52, '@') + "|\n\n");
  EXPECT_EQ(map_json(m.build()),
            "{\"type\": \"hist\", \"data\": {\"@lk\": {\"1,x\": "
            "[{\"min\": 0, \"max\": 9, \"count\": 1}]}}}");
}

TEST(MapPrint, TupleKeysAndValues) {
  ValueType key = tuple_type({i64(), string_type(4)});
  MapBuilder t(map_spec("@t", AggKind::None, key, i64()));
  t.add(Packer().u64(1).str("a", 4).bytes(), le64(5))
      .add(Packer().u64(1).str("b", 4).bytes(), le64(3))
      .add(Packer().u64(0).str("c", 4).bytes(), le64(9));
  EXPECT_EQ(map_text(t.build()), "@t[1, b]: 3\n@t[1, a]: 5\n@t[0, c]: 9\n");
  // bpftrace's complex.json: @complex[comm, 2] = 5.
  MapBuilder c(map_spec("@complex", AggKind::None,
                        tuple_type({string_type(16), i64()}), i64()));
  c.add(Packer().str("bpftrace", 16).u64(2).bytes(), le64(5));
  EXPECT_EQ(
      map_json(c.build()),
      "{\"type\": \"map\", \"data\": {\"@complex\": {\"bpftrace,2\": 5}}}");
  // A tuple value (bpftrace's tuple test).
  MapBuilder v(map_spec(
      "@", AggKind::None, no_key(),
      tuple_type({i64(), i64(), string_type(8), tuple_type({i64(), i64()})})));
  v.add({}, Packer().u64(1).u64(2).str("string", 8).u64(4).u64(5).bytes());
  EXPECT_EQ(map_json(v.build()), "{\"type\": \"map\", \"data\": {\"@\": "
                                 "[1,2,\"string\",[4,5]]}}");
  EXPECT_EQ(map_text(v.build()), "@: (1, 2, string, (4, 5))\n");
}

TEST(MapPrint, KeysSortByBpftraceRules) {
  // Non-integer values: by key. Integer keys compare signed, so a u64 key
  // with the top bit set comes first.
  MapBuilder m(map_spec("@k", AggKind::None, u64(), string_type(4)));
  m.add(le64(2), str_bytes("two", 4))
      .add(le64(UINT64_MAX), str_bytes("max", 4))
      .add(le64(1), str_bytes("one", 4));
  EXPECT_EQ(map_text(m.build()),
            "@k[18446744073709551615]: max\n@k[1]: one\n@k[2]: two\n");
  // Small signed keys compare in their own width.
  MapBuilder s(
      map_spec("@s", AggKind::None, int_type(2, true), string_type(4)));
  s.add(Packer().put(0, 0xffff, 2).bytes(), str_bytes("neg", 4))
      .add(Packer().put(0, 1, 2).bytes(), str_bytes("pos", 4));
  EXPECT_EQ(map_text(s.build()), "@s[-1]: neg\n@s[1]: pos\n");
  // Tuple keys: first field first, strings bytewise.
  MapBuilder t(map_spec("@t", AggKind::None,
                        tuple_type({string_type(4), i64()}), string_type(4)));
  t.add(Packer().str("b", 4).u64(1).bytes(), str_bytes("x", 4))
      .add(Packer().str("a", 4).u64(2).bytes(), str_bytes("y", 4))
      .add(Packer().str("a", 4).u64(static_cast<uint64_t>(-1)).bytes(),
           str_bytes("z", 4));
  EXPECT_EQ(map_text(t.build()), "@t[a, -1]: z\n@t[a, 2]: y\n@t[b, 1]: x\n");
  EXPECT_LT(compare_keys(string_type(4), str_bytes("ab", 4), str_bytes("b", 4)),
            0);
}

TEST(MapPrint, KeyTextQuirks) {
  // A string key that looks like a tuple loses its parentheses too, and
  // JSON keys lose every space.
  MapBuilder m(map_spec("@m", AggKind::None, string_type(8), i64()));
  m.add(str_bytes("(x)", 8), le64(1)).add(str_bytes("a b", 8), le64(2));
  EXPECT_EQ(map_text(m.build()), "@m[x]: 1\n@m[a b]: 2\n");
  EXPECT_EQ(map_json(m.build()),
            "{\"type\": \"map\", \"data\": {\"@m\": {\"x\": 1, \"ab\": 2}}}");
}

TEST(MapPrint, StackKeysPrintOnTheirOwnLines) {
  ValueType stack = simple_type(Kind::UStack, 8 + 16);
  stack.stack_limit = 2;
  MapBuilder m(map_spec("@", AggKind::Count, stack, u64()));
  m.add(Packer().u64(2).u64(0x10).u64(0x20).bytes(), le64(3));
  EXPECT_EQ(map_text(m.build()), "@[\n    0x10\n    0x20\n]: 3\n");
}

TEST(MapPrint, EmptyMaps) {
  MapBuilder c(map_spec("@c", AggKind::Count, i64(), u64()));
  EXPECT_EQ(map_text(c.build()), "");
  EXPECT_EQ(map_json(c.build()), "");
  MapBuilder h(hist_spec("@h", i64()));
  EXPECT_EQ(map_json(h.build()), "");
  // bpftrace wraps avg/stats maps before checking emptiness.
  MapBuilder a(map_spec("@a", AggKind::Avg, i64(), i64()));
  EXPECT_EQ(map_text(a.build()), "");
  EXPECT_EQ(map_json(a.build()),
            "{\"type\": \"stats\", \"data\": {\"@a\": {}}}");
}

TEST(MapPrint, ExitPrintsTwoNewlinesThenMapsByName) {
  MapBuilder b(map_spec("@b", AggKind::Count, no_key(), u64()));
  b.add({}, le64(2));
  MapBuilder anon(map_spec("@", AggKind::Count, no_key(), u64()));
  anon.add({}, le64(1));
  MapBuilder h(hist_spec("@a", no_key()));
  h.add({}, buckets_bytes(hist_with({1})));
  MapBuilder empty(map_spec("@e", AggKind::Count, i64(), u64()));

  std::ostringstream out, err;
  TextOutput text(out, err);
  print_maps_at_exit(text, {b.build(), h.build(), empty.build(), anon.build()});
  EXPECT_EQ(out.str(), "\n\n@: 1\n@a:\n[1]                    1 |" +
                           std::string(52, '@') + "|\n\n@b: 2\n");
  EXPECT_EQ(err.str(), "");

  std::ostringstream json_out;
  JsonOutput json(json_out);
  print_maps_at_exit(json, {b.build(), anon.build(), empty.build()});
  EXPECT_EQ(json_out.str(), "{\"type\": \"map\", \"data\": {\"@\": 1}}\n"
                            "{\"type\": \"map\", \"data\": {\"@b\": 2}}\n");
}

} // namespace
} // namespace ubtrace::output::test
