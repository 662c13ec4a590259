// pprof profiles (pprof.h): the profile.proto built from stack-keyed maps,
// read back with protobuf, and gzip that zlib inflates again.
#include "backends/output/folded_output.h"
#include "backends/output/pprof.h"
#include "tests/unit/output/map_builder.h"

#include <gtest/gtest.h>
#include <profile.pb.h>
#include <zlib.h>

namespace ubtrace::output::test {
namespace {

using runtime::AggKind;
namespace pb = perftools::profiles;

// /bin/app mapped at [0x1000, 0x4000) from offset 0; 0x1010 is `inner`
// inlined into `outer`, 0x2000 is `main`, 0x9000 is nothing known.
class Symbols : public Symbolizer {
public:
  std::vector<SymbolFrame> user(uint64_t addr, int64_t pid) override {
    pids.push_back(pid);
    if (addr == 0x1010)
      return {{"inner", 0, "/bin/app", "lib.c", 12, true},
              {"outer", 0x10, "/bin/app", "app.c", 40, false}};
    if (addr == 0x2000)
      return {{"main", 5, "/bin/app", "", 0, false}};
    return {};
  }
  std::vector<SymbolFrame> kernel(uint64_t) override { return {}; }
  std::optional<MappingInfo> mapping(uint64_t addr, int64_t) override {
    if (addr >= 0x1000 && addr < 0x4000)
      return MappingInfo{"/bin/app", 0x1000, 0x4000, 0, {0xab, 0x01}};
    return std::nullopt;
  }
  std::vector<int64_t> pids;
};

ValueType ustack_type(uint32_t limit) {
  ValueType t = simple_type(ValueType::Kind::UStack, 8 + 8 * limit + 8);
  t.stack_limit = limit;
  return t;
}

// A stack key: its frames (innermost first), then the pid.
std::vector<uint8_t> stack_key(std::vector<uint64_t> frames, uint32_t limit,
                               int64_t pid) {
  Packer p;
  p.u64(frames.size());
  for (uint32_t i = 0; i < limit; i++)
    p.u64(i < frames.size() ? frames[i] : 0);
  p.u64(static_cast<uint64_t>(pid));
  return p.bytes();
}

pb::Profile parse(const std::string &bytes) {
  pb::Profile p;
  EXPECT_TRUE(p.ParseFromString(bytes));
  return p;
}

TEST(Pprof, StackMapsBecomeSamplesWithLocationsAndLines) {
  Symbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  MapBuilder calls(
      map_spec("@calls", AggKind::Count, ustack_type(4), int_type(8, false)));
  calls.add(stack_key({0x1010, 0x2000, 0x9000}, 4, 77), Packer().u64(5).bytes())
      .add(stack_key({0x2000}, 4, 77), Packer().u64(2).bytes());
  PrintedMap m = calls.build(0, 0, ctx);
  ASSERT_TRUE(is_profile_map(m));
  pb::Profile p = parse(pprof_profile({&m}, &syms, {100, 50}));
  auto s = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };

  ASSERT_EQ(p.sample_type_size(), 1);
  EXPECT_EQ(s(p.sample_type(0).type()), "calls");
  EXPECT_EQ(s(p.sample_type(0).unit()), "count");
  EXPECT_EQ(s(p.default_sample_type()), "calls");
  EXPECT_EQ(p.time_nanos(), 100);
  EXPECT_EQ(p.duration_nanos(), 50);
  EXPECT_EQ(p.string_table(0), "");

  // Entries print by value: the 2, then the 5. Leaf first.
  ASSERT_EQ(p.sample_size(), 2);
  const pb::Sample &deep = p.sample(1);
  EXPECT_EQ(deep.value(0), 5);
  ASSERT_EQ(deep.location_id_size(), 3);
  const pb::Location &leaf = p.location(deep.location_id(0) - 1);
  EXPECT_EQ(leaf.address(), 0x1010u);
  ASSERT_EQ(leaf.line_size(), 2); // inner inlined into outer
  EXPECT_EQ(s(p.function(leaf.line(0).function_id() - 1).name()), "inner");
  EXPECT_EQ(leaf.line(0).line(), 12);
  EXPECT_EQ(s(p.function(leaf.line(1).function_id() - 1).name()), "outer");
  EXPECT_EQ(s(p.function(leaf.line(1).function_id() - 1).filename()), "app.c");
  // main's location is shared by both samples.
  EXPECT_EQ(deep.location_id(1), p.sample(0).location_id(0));
  // An unknown address: a location with its address, no mapping, no line.
  const pb::Location &unknown = p.location(deep.location_id(2) - 1);
  EXPECT_EQ(unknown.address(), 0x9000u);
  EXPECT_EQ(unknown.mapping_id(), 0u);
  EXPECT_EQ(unknown.line_size(), 0);

  ASSERT_EQ(p.mapping_size(), 1);
  const pb::Mapping &app = p.mapping(0);
  EXPECT_EQ(s(app.filename()), "/bin/app");
  EXPECT_EQ(s(app.build_id()), "ab01");
  EXPECT_EQ(app.memory_start(), 0x1000u);
  EXPECT_EQ(app.memory_limit(), 0x4000u);
  EXPECT_TRUE(app.has_functions());
  EXPECT_TRUE(app.has_filenames());
  EXPECT_TRUE(app.has_line_numbers());
  EXPECT_TRUE(app.has_inline_frames());
  EXPECT_EQ(leaf.mapping_id(), app.id());
  // The stack's own pid went to the symbolizer.
  for (int64_t pid : syms.pids)
    EXPECT_EQ(pid, 77);
}

TEST(Pprof, MapsShareSamplesAndOtherKeyPartsAreLabels) {
  Symbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  ValueType key = simple_type(ValueType::Kind::Tuple, 8 + 8 + 8 * 2 + 8);
  key.fields = {{"", 0, int_type(8, false)}, {"", 8, ustack_type(2)}};
  MapBuilder calls(
      map_spec("@calls", AggKind::Count, ustack_type(2), int_type(8, false)));
  calls.add(stack_key({0x2000}, 2, 1), Packer().u64(3).bytes());
  MapBuilder bytes(
      map_spec("@bytes", AggKind::Sum, ustack_type(2), int_type(8, true)));
  bytes.add(stack_key({0x2000}, 2, 1), Packer().u64(4096).bytes());
  MapBuilder by_fd(map_spec("@by_fd", AggKind::Count, key, int_type(8, false)));
  by_fd.spec().labels = {"fd", "stack"};
  std::vector<uint8_t> k = Packer().u64(9).bytes();
  auto st = stack_key({0x2000}, 2, 1);
  k.insert(k.end(), st.begin(), st.end());
  by_fd.add(k, Packer().u64(1).bytes());
  PrintedMap a = calls.build(0, 0, ctx), b = bytes.build(0, 0, ctx),
             c = by_fd.build(0, 0, ctx);
  ASSERT_TRUE(is_profile_map(c));
  pb::Profile p = parse(pprof_profile({&a, &b, &c}, &syms, {}));
  auto s = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };
  ASSERT_EQ(p.sample_type_size(), 3);
  EXPECT_EQ(s(p.sample_type(1).type()), "bytes");
  EXPECT_EQ(s(p.sample_type(1).unit()), "");
  // @calls and @bytes: one stack, no labels -> one sample, two columns.
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(p.sample(0).value(0), 3);
  EXPECT_EQ(p.sample(0).value(1), 4096);
  EXPECT_EQ(p.sample(0).value(2), 0);
  const pb::Sample &labelled = p.sample(1);
  EXPECT_EQ(labelled.value(2), 1);
  ASSERT_EQ(labelled.label_size(), 1);
  EXPECT_EQ(s(labelled.label(0).key()), "fd");
  EXPECT_EQ(labelled.label(0).num(), 9);
}

TEST(Pprof, FoldedNamesFramesAsPprofDoes) {
  // -f folded, given the symbolizer, names an unsymbolised address by its
  // file as pprof shows it ("[app]"), and one in no file by its address.
  Symbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  MapBuilder calls(map_spec("@calls", AggKind::Count, ustack_type(4),
                            int_type(8, false)));
  calls.add(stack_key({0x1010, 0x3000, 0x2000, 0x9000}, 4, 77),
            Packer().u64(5).bytes());
  PrintedMap m = calls.build(0, 0, ctx);
  EXPECT_EQ(folded_text(m, &ctx), "0x9000;main;[app];outer;inner 5\n");
  // Without it, from the text: the address as text prints it.
  EXPECT_EQ(folded_text(m), "0x9000;main;0x3000;outer;inner 5\n");
}

TEST(Pprof, OnlyIntegerMapsKeyedByStacks) {
  MapBuilder plain(
      map_spec("@n", AggKind::Count, int_type(8, false), int_type(8, false)));
  plain.add(Packer().u64(1).bytes(), Packer().u64(1).bytes());
  EXPECT_FALSE(is_profile_map(plain.build()));
  MapBuilder avg(
      map_spec("@lat", AggKind::Avg, ustack_type(2), int_type(8, true)));
  avg.add(stack_key({0x2000}, 2, 1), pair_bytes(10, 2));
  EXPECT_FALSE(is_profile_map(avg.build()));
}

TEST(Pprof, GzipInflatesBack) {
  std::string data(10000, 'x');
  data += "profile";
  std::string z = gzip(data);
  ASSERT_GE(z.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(z[0]), 0x1f);
  EXPECT_EQ(static_cast<uint8_t>(z[1]), 0x8b);
  z_stream in{};
  ASSERT_EQ(inflateInit2(&in, 15 + 16), Z_OK);
  std::string back(data.size() + 16, '\0');
  in.next_in = reinterpret_cast<Bytef *>(z.data());
  in.avail_in = static_cast<uInt>(z.size());
  in.next_out = reinterpret_cast<Bytef *>(back.data());
  in.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&in, Z_FINISH), Z_STREAM_END);
  back.resize(in.total_out);
  inflateEnd(&in);
  EXPECT_EQ(back, data);
}

} // namespace
} // namespace ubtrace::output::test
