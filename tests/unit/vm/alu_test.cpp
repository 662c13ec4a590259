// progs/alu.bpf.c computes every ALU and comparison operation on inputs from
// ctx; each result must equal what C computes on the host for the same
// inputs. Built for ISA v3 and v4 (signed division, sign-extending loads and
// moves, byte swaps).
#include "alu_layout.h"
#include "test_runtime.h"

#include <gtest/gtest.h>
#include <random>

namespace ubtrace::vm::test {
namespace {

using u64 = uint64_t;
using s64 = int64_t;
using u32 = uint32_t;
using s32 = int32_t;

template <class U, class S> u64 compare_flags(U a, U b) {
  S sa = S(a), sb = S(b);
  return u64(a == b) | u64(a != b) << 1 | u64(a > b) << 2 | u64(a >= b) << 3 |
         u64(a < b) << 4 | u64(a <= b) << 5 | u64(sa > sb) << 6 |
         u64(sa >= sb) << 7 | u64(sa < sb) << 8 | u64(sa <= sb) << 9 |
         u64((a & b) != 0) << 10;
}

std::vector<u64> expected(u64 a, u64 b, bool v4) {
  std::vector<u64> e(ALU_SLOTS, 0);
  u32 x = u32(a), y = u32(b);
  e[ADD64] = a + b;
  e[SUB64] = a - b;
  e[MUL64] = a * b;
  e[DIV64] = b ? a / b : 0;
  e[MOD64] = b ? a % b : 0;
  e[OR64] = a | b;
  e[AND64] = a & b;
  e[XOR64] = a ^ b;
  e[LSH64] = a << (b & 63);
  e[RSH64] = a >> (b & 63);
  e[ARSH64] = u64(s64(a) >> (b & 63));
  e[NEG64] = 0 - a;
  e[ADDI64] = a + 1234567;
  e[MULI64] = a * 0x1337;
  e[LSHI64] = a << 13;
  e[ARSHI64] = u64(s64(a) >> 7);
  e[ANDI64] = a & 0xff00ff;
  e[XORI64] = a ^ u64(-3);
  e[DIVI64] = a / 10;
  e[MODI64] = a % 1000;
  e[ADD32] = u32(x + y);
  e[SUB32] = u32(x - y);
  e[MUL32] = u32(x * y);
  e[DIV32] = y ? x / y : 0;
  e[MOD32] = y ? x % y : 0;
  e[OR32] = x | y;
  e[AND32] = x & y;
  e[XOR32] = x ^ y;
  e[LSH32] = u32(x << (y & 31));
  e[RSH32] = x >> (y & 31);
  e[ARSH32] = u32(s32(x) >> (y & 31));
  e[NEG32] = u32(0 - x);
  e[ADDI32] = u32(x + 77u);
  e[MULI32] = u32(x * 1000003u);
  e[RSHI32] = x >> 5;
  e[BSWAP16] = __builtin_bswap16(uint16_t(a));
  e[BSWAP32] = __builtin_bswap32(x);
  e[BSWAP64] = __builtin_bswap64(a);
  e[SEXT8] = u64(s64(int8_t(a)));
  e[SEXT16] = u64(s64(int16_t(a)));
  e[SEXT32] = u64(s64(s32(a)));
  e[ZEXT32] = x;
  e[CMP64] = compare_flags<u64, s64>(a, b);
  e[CMP32] = compare_flags<u32, s32>(x, y);
  e[CMPI64] = compare_flags<u64, s64>(a, 1000);
  e[CMPI32] = compare_flags<u32, s32>(x, u32(-5));
  if (v4) {
    s64 sa = s64(a), sb = s64(b);
    s32 sx = s32(x), sy = s32(y);
    bool overflow64 = sa == INT64_MIN && sb == -1;
    bool overflow32 = sx == INT32_MIN && sy == -1;
    e[SDIV64] = (sb == 0 || overflow64) ? 0 : u64(sa / sb);
    e[SMOD64] = (sb == 0 || overflow64) ? 0 : u64(sa % sb);
    e[SDIV32] = (sy == 0 || overflow32) ? 0 : u64(u32(sx / sy));
    e[SMOD32] = (sy == 0 || overflow32) ? 0 : u64(u32(sx % sy));
    e[LDSX8] = u64(s64(int8_t(b)));
    e[LDSX16] = u64(s64(int16_t(b)));
    e[LDSX32] = u64(s64(s32(b)));
  }
  return e;
}

std::vector<std::pair<u64, u64>> inputs() {
  std::vector<u64> edges = {0,
                            1,
                            2,
                            3,
                            7,
                            10,
                            63,
                            64,
                            1000,
                            0x7f,
                            0x80,
                            0xff,
                            0x7fff,
                            0x8000,
                            0x7fffffff,
                            0x80000000,
                            0xffffffff,
                            0x100000000,
                            u64(INT64_MAX),
                            u64(INT64_MIN),
                            u64(-1),
                            u64(-2),
                            u64(-5),
                            u64(-1000),
                            0x123456789abcdef0};
  std::vector<std::pair<u64, u64>> out;
  for (u64 a : edges)
    for (u64 b : edges)
      out.emplace_back(a, b);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    u64 a = rng(), b = rng();
    // Mix in small and sign-boundary values so every branch shows up.
    if (i % 3 == 1)
      b >>= (rng() % 64);
    if (i % 5 == 2)
      a = u64(s64(int32_t(a)));
    out.emplace_back(a, b);
  }
  return out;
}

class AluTest : public ::testing::TestWithParam<const char *> {};

TEST_P(AluTest, EveryOperationMatchesC) {
  std::string name = GetParam();
  bool v4 = name == "alu_v4";
  Runtime rt = Runtime::from_file(name);
  auto prog = rt.prepare("alu", ContextInfo{sizeof(alu_in)});
  ASSERT_TRUE(prog) << prog.error();
  u64 *out = rt.global<u64>(".bss");
  size_t checked = 0;
  for (auto [a, b] : inputs()) {
    alu_in in{a, b};
    RunResult r = run(*prog, &in);
    ASSERT_EQ(r.status, RunStatus::Ok);
    std::vector<u64> want = expected(a, b, v4);
    for (int slot = 0; slot < ALU_SLOTS; ++slot) {
      ASSERT_EQ(out[slot], want[slot]) << name << " slot " << slot << " a=0x"
                                       << std::hex << a << " b=0x" << b;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000u);
}

INSTANTIATE_TEST_SUITE_P(Cpu, AluTest, ::testing::Values("alu", "alu_v4"));

} // namespace
} // namespace ubtrace::vm::test
