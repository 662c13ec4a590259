// The C definitions pass: struct, union, enum and typedef definitions and
// simple #defines become types. Layouts are checked against the compiler
// that builds this test: each definition below is compiled as C++ and
// handed to the pass as text, and sizes, offsets and bitfield positions
// must agree.
#include "ast/passes/c_definitions.h"
#include "tests/unit/parser/frontend_support.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>

namespace ubtrace::test {
namespace {

// Defines NAME here and keeps its text for the pass.
#define C_STRUCT(NAME, ...)                                                    \
  struct NAME __VA_ARGS__;                                                     \
  [[maybe_unused]] constexpr const char *NAME##_text =                         \
      "struct " #NAME " " #__VA_ARGS__;
#define C_UNION(NAME, ...)                                                     \
  union NAME __VA_ARGS__;                                                      \
  [[maybe_unused]] constexpr const char *NAME##_text =                         \
      "union " #NAME " " #__VA_ARGS__;

// A record with attributes after its braces.
#define C_STRUCT_ATTR(NAME, ATTR, ...)                                         \
  struct NAME __VA_ARGS__ ATTR;                                                \
  [[maybe_unused]] constexpr const char *NAME##_text =                         \
      "struct " #NAME " " #__VA_ARGS__ " " #ATTR;

C_STRUCT_ATTR(Packed, __attribute__((packed)), {
  int x;
  char y;
  long z;
  short w;
})
C_STRUCT_ATTR(Aligned, __attribute__((aligned(16))), {
  char a;
  int b;
})
C_STRUCT_ATTR(PackedAligned,
              __attribute__((packed)) __attribute__((aligned(4))), {
                char a;
                long b;
              })

C_STRUCT(Mixed, {
  char c;
  int i;
  short s;
  long l;
  char n[3];
})
C_STRUCT(Nested, {
  struct Mixed m;
  char tail;
  unsigned char u[5];
})
C_UNION(Overlay, {
  int i;
  char c[7];
  long l;
})
C_STRUCT(Bits, {
  unsigned a : 3, b : 5;
  unsigned c : 30;
  char d;
})
C_STRUCT(Bits2, {
  char x;
  unsigned short y : 4;
  unsigned short z : 12;
  int w : 20;
  unsigned long long v : 40;
  signed char t : 2;
})
C_STRUCT(Bits3, {
  unsigned char a : 3;
  unsigned : 0;
  unsigned char b : 2;
  unsigned : 5;
  unsigned short c : 9;
  long d : 1;
})
C_UNION(BitUnion, {
  unsigned a : 3;
  unsigned short b : 12;
  char c;
})
C_STRUCT(WithAnonymous, {
  int kind;
  union {
    int i;
    long l;
  };
  char t;
  struct {
    short p;
    short q;
  };
})
C_STRUCT(Arrays, {
  int m[2][3];
  void *p;
  char *s;
  unsigned long long w[2];
})
C_STRUCT(Qualified, {
  const char *name;
  volatile int v;
  const unsigned long long big;
})
C_STRUCT(FnPtr, {
  void (*cb)(int, char *);
  int x;
})
C_STRUCT(CWords, {
  unsigned char a;
  signed char b;
  short int c;
  unsigned short d;
  long long e;
  unsigned f;
  long unsigned int g;
  signed h;
})
C_STRUCT(Fixed, {
  uint8_t a;
  int16_t b;
  uint32_t c;
  int64_t d;
  size_t e;
  bool f;
})

struct Expected {
  const char *name;
  size_t offset;
  size_t size;
};
#define FIELD(S, f)                                                            \
  Expected {                                                                   \
    #f, offsetof(S, f), sizeof(S::f)                                           \
  }

// Checks the pass's layout of `c_name` against the compiler's.
void expect_layout(const char *text, const std::string &c_name, size_t size,
                   size_t align, std::vector<Expected> fields) {
  SCOPED_TRACE(text);
  Frontend f = analyse(std::string(text) + "\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  ASSERT_TRUE(f.ok) << f.diags();
  auto it = f.ctx->c_types.records.find(c_name);
  ASSERT_NE(it, f.ctx->c_types.records.end()) << c_name;
  const ast::Type &t = it->second;
  EXPECT_EQ(t.size, size);
  EXPECT_EQ(ast::type_alignment(t), align);
  ASSERT_EQ(t.fields.size(), fields.size());
  for (size_t i = 0; i < fields.size(); i++) {
    EXPECT_EQ(t.fields[i].name, fields[i].name);
    EXPECT_EQ(t.fields[i].offset, fields[i].offset) << fields[i].name;
    EXPECT_EQ(t.fields[i].type->size, fields[i].size) << fields[i].name;
  }
}

TEST(CDefinitions, NaturalAlignmentAndPadding) {
  expect_layout(Mixed_text, "struct Mixed", sizeof(Mixed), alignof(Mixed),
                {FIELD(Mixed, c), FIELD(Mixed, i), FIELD(Mixed, s),
                 FIELD(Mixed, l), FIELD(Mixed, n)});
}

TEST(CDefinitions, NestedStructs) {
  std::string both = std::string(Mixed_text) + "\n" + Nested_text;
  expect_layout(both.c_str(), "struct Nested", sizeof(Nested), alignof(Nested),
                {FIELD(Nested, m), FIELD(Nested, tail), FIELD(Nested, u)});
}

TEST(CDefinitions, Unions) {
  expect_layout(Overlay_text, "union Overlay", sizeof(Overlay),
                alignof(Overlay),
                {FIELD(Overlay, i), FIELD(Overlay, c), FIELD(Overlay, l)});
}

TEST(CDefinitions, AnonymousMembersJoinTheRecord) {
  expect_layout(WithAnonymous_text, "struct WithAnonymous",
                sizeof(WithAnonymous), alignof(WithAnonymous),
                {FIELD(WithAnonymous, kind), FIELD(WithAnonymous, i),
                 FIELD(WithAnonymous, l), FIELD(WithAnonymous, t),
                 FIELD(WithAnonymous, p), FIELD(WithAnonymous, q)});
}

TEST(CDefinitions, ArraysAndPointers) {
  expect_layout(
      Arrays_text, "struct Arrays", sizeof(Arrays), alignof(Arrays),
      {FIELD(Arrays, m), FIELD(Arrays, p), FIELD(Arrays, s), FIELD(Arrays, w)});
}

TEST(CDefinitions, QualifiersAreIgnored) {
  expect_layout(
      Qualified_text, "struct Qualified", sizeof(Qualified), alignof(Qualified),
      {FIELD(Qualified, name), FIELD(Qualified, v), FIELD(Qualified, big)});
}

TEST(CDefinitions, FunctionPointers) {
  expect_layout(FnPtr_text, "struct FnPtr", sizeof(FnPtr), alignof(FnPtr),
                {FIELD(FnPtr, cb), FIELD(FnPtr, x)});
}

TEST(CDefinitions, CIntegerWords) {
  expect_layout(CWords_text, "struct CWords", sizeof(CWords), alignof(CWords),
                {FIELD(CWords, a), FIELD(CWords, b), FIELD(CWords, c),
                 FIELD(CWords, d), FIELD(CWords, e), FIELD(CWords, f),
                 FIELD(CWords, g), FIELD(CWords, h)});
}

// __attribute__((packed)) and ((aligned(N))) after the braces lay the
// record out as the compiler does.
TEST(CDefinitions, PackedAndAlignedRecords) {
  expect_layout(
      Packed_text, "struct Packed", sizeof(Packed), alignof(Packed),
      {FIELD(Packed, x), FIELD(Packed, y), FIELD(Packed, z), FIELD(Packed, w)});
  expect_layout(Aligned_text, "struct Aligned", sizeof(Aligned),
                alignof(Aligned), {FIELD(Aligned, a), FIELD(Aligned, b)});
  expect_layout(PackedAligned_text, "struct PackedAligned",
                sizeof(PackedAligned), alignof(PackedAligned),
                {FIELD(PackedAligned, a), FIELD(PackedAligned, b)});
}

TEST(CDefinitions, FixedWidthTypedefNames) {
  expect_layout(Fixed_text, "struct Fixed", sizeof(Fixed), alignof(Fixed),
                {FIELD(Fixed, a), FIELD(Fixed, b), FIELD(Fixed, c),
                 FIELD(Fixed, d), FIELD(Fixed, e), FIELD(Fixed, f)});
}

// The bit position and width of a bitfield, found by setting it to all
// ones in a zeroed object.
template <class S, class Set> std::pair<size_t, size_t> bit_range(Set set) {
  S s;
  std::memset(static_cast<void *>(&s), 0, sizeof s);
  set(s);
  const auto *bytes = reinterpret_cast<const unsigned char *>(&s);
  size_t first = SIZE_MAX, count = 0;
  for (size_t bit = 0; bit < 8 * sizeof s; bit++)
    if (bytes[bit / 8] & (1u << (bit % 8))) {
      first = std::min(first, bit);
      count++;
    }
  return {first, count};
}
#define BITS(S, f)                                                             \
  bit_range<S>([](S &s) {                                                      \
    s.f = 0;                                                                   \
    s.f--; /* every bit of the (unsigned) field set, by wrapping */            \
  })

void expect_bitfields(
    const char *text, const std::string &c_name, size_t size,
    std::vector<std::pair<std::string, std::pair<size_t, size_t>>> expected) {
  SCOPED_TRACE(text);
  Frontend f = analyse(std::string(text) + "\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  ASSERT_TRUE(f.ok) << f.diags();
  const ast::Type &t = f.ctx->c_types.records.at(c_name);
  EXPECT_EQ(t.size, size);
  for (const auto &[name, range] : expected) {
    const ast::Field *field = t.field(name);
    ASSERT_NE(field, nullptr) << name;
    EXPECT_EQ(8 * field->offset + field->bitfield_shift, range.first) << name;
    EXPECT_EQ(field->bitfield_bits, range.second) << name;
  }
}

TEST(CDefinitions, BitfieldsShareStorageUnits) {
  expect_bitfields(
      Bits_text, "struct Bits", sizeof(Bits),
      {{"a", BITS(Bits, a)}, {"b", BITS(Bits, b)}, {"c", BITS(Bits, c)}});
  Frontend f = analyse(std::string(Bits_text) + "\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  EXPECT_EQ(f.ctx->c_types.records.at("struct Bits").field("d")->offset,
            offsetof(Bits, d));
}

TEST(CDefinitions, BitfieldsOfMixedWidths) {
  expect_bitfields(Bits2_text, "struct Bits2", sizeof(Bits2),
                   {{"y", BITS(Bits2, y)},
                    {"z", BITS(Bits2, z)},
                    {"w", BITS(Bits2, w)},
                    {"v", BITS(Bits2, v)},
                    {"t", BITS(Bits2, t)}});
}

TEST(CDefinitions, ZeroWidthAndUnnamedBitfields) {
  expect_bitfields(Bits3_text, "struct Bits3", sizeof(Bits3),
                   {{"a", BITS(Bits3, a)},
                    {"b", BITS(Bits3, b)},
                    {"c", BITS(Bits3, c)},
                    {"d", BITS(Bits3, d)}});
  Frontend f = analyse(std::string(Bits3_text) + "\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  // Unnamed bitfields are padding, not fields.
  EXPECT_EQ(f.ctx->c_types.records.at("struct Bits3").fields.size(), 4u);
}

TEST(CDefinitions, BitfieldsInUnions) {
  expect_bitfields(BitUnion_text, "union BitUnion", sizeof(BitUnion),
                   {{"a", BITS(BitUnion, a)}, {"b", BITS(BitUnion, b)}});
}

TEST(CDefinitions, BitfieldsReadThroughAPointer) {
  EXPECT_EQ(typed_body("$p = (struct Flags *)arg0; print(($p->on, $p->mode));",
                       "struct Flags { unsigned on : 1; unsigned mode : 3; }\n"
                       "uprobe:/bin/x:f"),
            R"(=
 variable: $p :: [struct Flags *]
 (struct Flags *) :: [struct Flags *]
  identifier: arg0 :: [int64]
call: print :: [void]
 tuple: :: [(uint32,uint32)]
  ->on :: [uint32]
   variable: $p :: [struct Flags *]
  ->mode :: [uint32]
   variable: $p :: [struct Flags *]
)");
}

TEST(CDefinitions, SelfReferencingStruct) {
  Frontend f = analyse(R"(struct Node { struct Node *next; int v; }
uprobe:/bin/x:f { $n = (struct Node *)arg0; print($n->next->next->v); })");
  EXPECT_TRUE(f.ok) << f.diags();
  EXPECT_EQ(f.diags(), "");
}

TEST(CDefinitions, Enums) {
  Frontend f = analyse("enum Color { RED, GREEN = 5, BLUE, NEG = -3, "
                       "BIG = 1 << 4 | 1 }\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  ASSERT_TRUE(f.ok) << f.diags();
  auto &values = f.ctx->c_types.enum_values;
  EXPECT_EQ(values.at("RED").second, 0);
  EXPECT_EQ(values.at("GREEN").second, 5);
  EXPECT_EQ(values.at("BLUE").second, 6);
  EXPECT_EQ(values.at("NEG").second, -3);
  EXPECT_EQ(values.at("BIG").second, 17);
  EXPECT_EQ(values.at("RED").first, "Color");
  EXPECT_EQ(f.ctx->c_types.enums.at("Color").at(6), "BLUE");
}

// An enum value is a constant of its enum's type: stored in a variable or
// a tuple it stays one (64 bits wide), so that it prints by name.
TEST(CDefinitions, EnumValuesAreConstantsInScripts) {
  EXPECT_EQ(typed_body("print((RED, BLUE)); $c = (enum Color)1;",
                       "enum Color { RED, GREEN, BLUE }\nBEGIN"),
            R"(call: print :: [void]
 tuple: :: [(enum Color,enum Color)]
  identifier: RED :: [enum Color]
  identifier: BLUE :: [enum Color]
=
 variable: $c :: [enum Color]
 (enum Color) :: [enum Color]
  int: 1 :: [int8]
)");
}

TEST(CDefinitions, EnumSizedArraysAndDefines) {
  Frontend f = analyse("#define LEN 4\nenum { SLOTS = 3 };\n"
                       "struct S { int a[LEN]; char b[SLOTS * 2 + 1]; "
                       "long c[(LEN << 1) - 1]; }\nBEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  ASSERT_TRUE(f.ok) << f.diags();
  const ast::Type &s = f.ctx->c_types.records.at("struct S");
  EXPECT_EQ(s.field("a")->type->count, 4u);
  EXPECT_EQ(s.field("b")->type->size, 7u); // char[7] is a string
  EXPECT_EQ(s.field("c")->type->count, 7u);
  EXPECT_EQ(s.size, 16u + 7u + 1u + 56u);
}

TEST(CDefinitions, CharArraysAreStrings) {
  EXPECT_EQ(typed_body("$p = (struct S *)arg0; print($p->name); "
                       "print($p->raw[1]);",
                       "struct S { char name[16]; unsigned char raw[4]; }\n"
                       "uprobe:/bin/x:f"),
            R"(=
 variable: $p :: [struct S *]
 (struct S *) :: [struct S *]
  identifier: arg0 :: [int64]
call: print :: [void]
 ->name :: [string[16]]
  variable: $p :: [struct S *]
call: print :: [void]
 [] :: [uint8]
  ->raw :: [uint8[4]]
   variable: $p :: [struct S *]
  int: 1 :: [int8]
)");
}

TEST(CDefinitions, Typedefs) {
  Frontend f = analyse("typedef unsigned long long u64x;\n"
                       "typedef struct { int a; char b; } anon_t;\n"
                       "struct Named { u64x v; anon_t inner; };\n"
                       "typedef struct Named named_t, *named_p;\n"
                       "BEGIN { }",
                       RunOptions{{}, false, "c-definitions"});
  ASSERT_TRUE(f.ok) << f.diags();
  auto &td = f.ctx->c_types.typedefs;
  EXPECT_EQ(ast::type_str(td.at("u64x")), "uint64");
  EXPECT_EQ(td.at("anon_t").size, 8u);
  EXPECT_EQ(ast::type_str(td.at("named_t")), "struct Named");
  EXPECT_EQ(ast::type_str(td.at("named_p")), "struct Named *");
  EXPECT_EQ(f.ctx->c_types.records.at("struct Named").size, 16u);
}

TEST(CDefinitions, TypedefsInCastsAndSizeof) {
  EXPECT_EQ(typed_body("$p = (entry_t *)arg0; print(($p->id, sizeof(entry_t), "
                       "sizeof(struct E)));",
                       "typedef struct E { int id; long t; } entry_t;\n"
                       "uprobe:/bin/x:f"),
            R"(=
 variable: $p :: [struct E *]
 (entry_t *) :: [struct E *]
  identifier: arg0 :: [int64]
call: print :: [void]
 tuple: :: [(int32,uint64,uint64)]
  ->id :: [int32]
   variable: $p :: [struct E *]
  sizeof :: [uint64]
   identifier: entry_t :: [none]
  sizeof: struct E :: [uint64]
)");
}

TEST(CDefinitions, DefinesBecomeLiterals) {
  EXPECT_EQ(typed_body("print((LIMIT, NAME, NEGATIVE));",
                       "#define LIMIT 0x10\n#define NAME \"abc\"\n"
                       "#define NEGATIVE -2\nBEGIN"),
            R"(call: print :: [void]
 tuple: :: [(int8,string[4],int8)]
  int: 16 :: [int8]
  string: abc :: [string[4]]
  int: -2 :: [int8]
)");
}

TEST(CDefinitions, IncludesAreRecordedAndIgnored) {
  EXPECT_EQ(diagnostics("#include <linux/sched.h>\n#include \"local.h\"\n"
                        "BEGIN { }"),
            "");
}

TEST(CDefinitions, FunctionLikeDefinesAreRejected) {
  EXPECT_EQ(
      diagnostics("#define MAX(a, b) ((a) > (b) ? (a) : (b))\nBEGIN { }"),
      R"(stdin:1:1-42: ERROR: only simple #define NAME VALUE macros are supported
#define MAX(a, b) ((a) > (b) ? (a) : (b))
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(CDefinitions, Errors) {
  // The last member's ';' may be left out (as bpftrace allows); a missing
  // one between members is still an error.
  EXPECT_EQ(diagnostics("struct F { int a } BEGIN { }"), "");
  EXPECT_EQ(diagnostics("struct F { int a int b; } BEGIN { }"),
            R"(stdin:1:1-26: ERROR: C definition: expected ';' but found 'int'
struct F { int a int b; } BEGIN { }
~~~~~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(diagnostics("struct G { foo_t a; } BEGIN { }"),
            R"(stdin:1:1-22: ERROR: C definition: unknown type 'foo_t'
struct G { foo_t a; } BEGIN { }
~~~~~~~~~~~~~~~~~~~~~
)");
  EXPECT_EQ(diagnostics("struct H { int a[N]; } BEGIN { }"),
            R"(stdin:1:1-23: ERROR: C definition: unknown constant 'N'
struct H { int a[N]; } BEGIN { }
~~~~~~~~~~~~~~~~~~~~~~
)");
  // A definition ends at its closing brace: what follows is no part of it.
  EXPECT_EQ(diagnostics("struct I { int a; } x; BEGIN { }"),
            R"(stdin:1:22-23: ERROR: syntax error, unexpected ;, expecting {
struct I { int a; } x; BEGIN { }
                     ~
)");
  EXPECT_EQ(diagnostics("typedef struct { int a; } t, *; BEGIN { }"),
            R"(stdin:1:1-32: ERROR: C definition: typedef without a name
typedef struct { int a; } t, *; BEGIN { }
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
)");
}

TEST(CDefinitions, CBaseTypeNames) {
  EXPECT_EQ(ast::type_str(ast::c_base_type("unsigned long int")), "uint64");
  EXPECT_EQ(ast::type_str(ast::c_base_type("long long")), "int64");
  EXPECT_EQ(ast::type_str(ast::c_base_type("short unsigned")), "uint16");
  EXPECT_EQ(ast::type_str(ast::c_base_type("char")), "int8");
  EXPECT_EQ(ast::type_str(ast::c_base_type("unsigned char")), "uint8");
  EXPECT_EQ(ast::type_str(ast::c_base_type("const int")), "int32");
  EXPECT_EQ(ast::type_str(ast::c_base_type("unsigned")), "uint32");
  EXPECT_EQ(ast::type_str(ast::c_base_type("u64")), "uint64");
  EXPECT_EQ(ast::type_str(ast::c_base_type("__s16")), "int16");
  EXPECT_EQ(ast::type_str(ast::c_base_type("pid_t")), "int32");
  EXPECT_EQ(ast::type_str(ast::c_base_type("_Bool")), "bool");
  EXPECT_EQ(ast::type_str(ast::c_base_type("void")), "void");
  EXPECT_TRUE(ast::c_base_type("struct").is_none());
  EXPECT_TRUE(ast::c_base_type("unknown_t").is_none());
  EXPECT_TRUE(ast::c_base_type("int foo").is_none());
}

} // namespace
} // namespace ubtrace::test
