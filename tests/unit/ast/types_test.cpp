// ast/types: names as bpftrace prints them, layout of tuples and records,
// sameness and the common type of two types.
#include "ast/types.h"

#include <gtest/gtest.h>

namespace ubtrace::ast {
namespace {

TEST(TypeNames, Scalars) {
  EXPECT_EQ(type_str(make_int(1, true)), "int8");
  EXPECT_EQ(type_str(make_int(8, false)), "uint64");
  EXPECT_EQ(type_str(make_bool()), "bool");
  EXPECT_EQ(type_str(make_void()), "void");
  EXPECT_EQ(type_str(Type{}), "none");
  EXPECT_EQ(type_str(make_string(16)), "string[16]");
  EXPECT_EQ(type_str(make_string(0)), "string");
  EXPECT_EQ(type_str(make_buffer(8)), "buffer[8]");
}

TEST(TypeNames, Compounds) {
  EXPECT_EQ(type_str(make_pointer(make_int(4, true))), "int32 *");
  EXPECT_EQ(type_str(make_pointer(make_pointer(make_void()))), "void * *");
  EXPECT_EQ(type_str(make_array(make_int(1, false), 4)), "uint8[4]");
  EXPECT_EQ(type_str(make_tuple({make_int(8, true), make_string(3)})),
            "(int64,string[3])");
  EXPECT_EQ(type_str(make_record({"a", "b"}, {make_int(8, true), make_bool()})),
            "record { .a = int64, .b = bool }");
  Type e = make_int(4, false);
  e.name = "color";
  EXPECT_EQ(type_str(e), "enum color");
  Type s = make_simple(TypeKind::CStruct, 8);
  s.name = "struct foo";
  EXPECT_EQ(type_str(s), "struct foo");
}

TEST(TypeNames, Aggregations) {
  Type sum = make_simple(TypeKind::Sum, 8);
  EXPECT_EQ(type_str(sum), "sum_t");
  sum.agg_signed = false;
  EXPECT_EQ(type_str(sum), "usum_t");
  EXPECT_EQ(type_str(make_simple(TypeKind::Count, 8)), "count_t");
  EXPECT_EQ(type_str(make_simple(TypeKind::Hist, 8)), "hist_t");
  EXPECT_EQ(type_str(make_simple(TypeKind::LHist, 8)), "lhist_t");
}

TEST(TypeLayout, TuplesAlignEachElement) {
  Type t =
      make_tuple({make_int(1, false), make_int(8, true), make_int(2, true)});
  ASSERT_EQ(t.fields.size(), 3u);
  EXPECT_EQ(t.fields[0].offset, 0u);
  EXPECT_EQ(t.fields[1].offset, 8u);
  EXPECT_EQ(t.fields[2].offset, 16u);
  EXPECT_EQ(t.size, 24u);
  EXPECT_EQ(type_alignment(t), 8u);
  Type s = make_tuple({make_string(3), make_int(4, false)});
  EXPECT_EQ(s.fields[1].offset, 4u);
  EXPECT_EQ(s.size, 8u);
  EXPECT_EQ(make_tuple({}).size, 0u);
}

TEST(TypeLayout, RecordsKeepTheirNames) {
  Type r = make_record({"x", "y"}, {make_int(4, true), make_int(4, true)});
  ASSERT_NE(r.field("y"), nullptr);
  EXPECT_EQ(r.field("y")->offset, 4u);
  EXPECT_EQ(r.field("z"), nullptr);
  EXPECT_EQ(r.size, 8u);
}

TEST(SameType, IntegersBySizeAndSign) {
  EXPECT_TRUE(same_type(make_int(4, true), make_int(4, true)));
  EXPECT_FALSE(same_type(make_int(4, true), make_int(4, false)));
  EXPECT_FALSE(same_type(make_int(4, true), make_int(8, true)));
  EXPECT_FALSE(same_type(make_int(1, false), make_bool()));
}

TEST(SameType, StringsOfAnySize) {
  EXPECT_TRUE(same_type(make_string(4), make_string(64)));
  EXPECT_FALSE(same_type(make_buffer(4), make_buffer(8)));
}

TEST(SameType, CompoundsElementwise) {
  EXPECT_TRUE(same_type(make_pointer(make_int(4, true)),
                        make_pointer(make_int(4, true))));
  EXPECT_FALSE(same_type(make_pointer(make_int(4, true)),
                         make_pointer(make_int(8, true))));
  EXPECT_FALSE(same_type(make_array(make_int(1, true), 4),
                         make_array(make_int(1, true), 5)));
  EXPECT_FALSE(same_type(make_record({"a"}, {make_bool()}),
                         make_record({"b"}, {make_bool()})));
  Type h1 = make_simple(TypeKind::Hist, 8), h2 = h1;
  h2.hist_bits = 3;
  EXPECT_FALSE(same_type(h1, h2));
}

TEST(CommonType, IntegersPromote) {
  EXPECT_EQ(type_str(common_type(make_int(1, true), make_int(4, true))),
            "int32");
  EXPECT_EQ(type_str(common_type(make_int(2, false), make_int(8, false))),
            "uint64");
  // Mixed signs need a signed type wider than the unsigned one.
  EXPECT_EQ(type_str(common_type(make_int(1, false), make_int(4, true))),
            "int32");
  EXPECT_EQ(type_str(common_type(make_int(4, false), make_int(4, true))),
            "int64");
  EXPECT_EQ(type_str(common_type(make_int(8, false), make_int(1, true))),
            "int64");
  EXPECT_EQ(type_str(common_type(make_bool(), make_int(4, true))), "int32");
}

TEST(CommonType, StringsTakeTheLongest) {
  EXPECT_EQ(type_str(common_type(make_string(3), make_string(10))),
            "string[10]");
}

TEST(CommonType, TuplesAndRecordsElementwise) {
  Type a = make_tuple({make_int(1, true), make_string(2)});
  Type b = make_tuple({make_int(8, true), make_string(5)});
  EXPECT_EQ(type_str(common_type(a, b)), "(int64,string[5])");
  EXPECT_TRUE(common_type(a, make_tuple({make_int(1, true)})).is_none());
  // Records pair fields by name, in the first one's order.
  Type r1 = make_record({"a", "b"}, {make_int(8, true), make_string(2)});
  Type r2 = make_record({"b", "a"}, {make_string(4), make_int(1, true)});
  EXPECT_EQ(type_str(common_type(r1, r2)),
            "record { .a = int64, .b = string[4] }");
  Type r3 = make_record({"a", "c"}, {make_int(8, true), make_string(2)});
  EXPECT_TRUE(common_type(r1, r3).is_none());
}

TEST(CommonType, UnrelatedTypesHaveNone) {
  EXPECT_TRUE(common_type(make_int(8, true), make_string(2)).is_none());
  EXPECT_TRUE(common_type(make_pointer(make_int(4, true)),
                          make_pointer(make_int(8, true)))
                  .is_none());
  EXPECT_TRUE(common_type(make_simple(TypeKind::Count, 8),
                          make_simple(TypeKind::Sum, 8))
                  .is_none());
}

} // namespace
} // namespace ubtrace::ast
