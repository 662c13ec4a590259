// Every ALU and jump operation on values the program cannot know (they come
// from ctx), so clang emits the instructions instead of folding them.
// Compiled for -mcpu=v3 and -mcpu=v4 (signed division, ldsx, movsx, bswap).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "alu_layout.h"

typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef int s32;

u64 out[ALU_SLOTS];

static __always_inline u64 cmp64(u64 a, u64 b) {
  s64 sa = (s64)a, sb = (s64)b;
  return (u64)(a == b) | (u64)(a != b) << 1 | (u64)(a > b) << 2 |
         (u64)(a >= b) << 3 | (u64)(a < b) << 4 | (u64)(a <= b) << 5 |
         (u64)(sa > sb) << 6 | (u64)(sa >= sb) << 7 | (u64)(sa < sb) << 8 |
         (u64)(sa <= sb) << 9 | (u64)((a & b) != 0) << 10;
}

static __always_inline u64 cmp32(u32 a, u32 b) {
  s32 sa = (s32)a, sb = (s32)b;
  return (u64)(a == b) | (u64)(a != b) << 1 | (u64)(a > b) << 2 |
         (u64)(a >= b) << 3 | (u64)(a < b) << 4 | (u64)(a <= b) << 5 |
         (u64)(sa > sb) << 6 | (u64)(sa >= sb) << 7 | (u64)(sa < sb) << 8 |
         (u64)(sa <= sb) << 9 | (u64)((a & b) != 0) << 10;
}

SEC("uprobe")
int alu(struct alu_in *ctx) {
  u64 a = ctx->a, b = ctx->b;
  u32 x = (u32)a, y = (u32)b;
  out[ADD64] = a + b;
  out[SUB64] = a - b;
  out[MUL64] = a * b;
  out[DIV64] = b ? a / b : 0;
  out[MOD64] = b ? a % b : 0;
  out[OR64] = a | b;
  out[AND64] = a & b;
  out[XOR64] = a ^ b;
  out[LSH64] = a << (b & 63);
  out[RSH64] = a >> (b & 63);
  out[ARSH64] = (u64)((s64)a >> (b & 63));
  out[NEG64] = -a;
  out[ADDI64] = a + 1234567;
  out[MULI64] = a * 0x1337;
  out[LSHI64] = a << 13;
  out[ARSHI64] = (u64)((s64)a >> 7);
  out[ANDI64] = a & 0xff00ff;
  out[XORI64] = a ^ (u64)-3;
  out[DIVI64] = a / 10;
  out[MODI64] = a % 1000;
  out[ADD32] = x + y;
  out[SUB32] = x - y;
  out[MUL32] = x * y;
  out[DIV32] = y ? x / y : 0;
  out[MOD32] = y ? x % y : 0;
  out[OR32] = x | y;
  out[AND32] = x & y;
  out[XOR32] = x ^ y;
  out[LSH32] = x << (y & 31);
  out[RSH32] = x >> (y & 31);
  out[ARSH32] = (u32)((s32)x >> (y & 31));
  out[NEG32] = (u32)-x;
  out[ADDI32] = x + 77u;
  out[MULI32] = x * 1000003u;
  out[RSHI32] = x >> 5;
  out[BSWAP16] = __builtin_bswap16((unsigned short)a);
  out[BSWAP32] = __builtin_bswap32(x);
  out[BSWAP64] = __builtin_bswap64(a);
  out[SEXT8] = (u64)(s64)(signed char)a;
  out[SEXT16] = (u64)(s64)(short)a;
  out[SEXT32] = (u64)(s64)(s32)a;
  out[ZEXT32] = (u64)x;
  out[CMP64] = cmp64(a, b);
  out[CMP32] = cmp32(x, y);
  out[CMPI64] = cmp64(a, 1000);
  out[CMPI32] = cmp32(x, (u32)-5);
#if __BPF_CPU_VERSION__ >= 4
  s64 sa = (s64)a, sb = (s64)b;
  s32 sx = (s32)x, sy = (s32)y;
  int overflow64 = sa == (s64)(1ULL << 63) && sb == -1;
  int overflow32 = sx == (s32)(1U << 31) && sy == -1;
  out[SDIV64] = (sb == 0 || overflow64) ? 0 : (u64)(sa / sb);
  out[SMOD64] = (sb == 0 || overflow64) ? 0 : (u64)(sa % sb);
  out[SDIV32] = (sy == 0 || overflow32) ? 0 : (u64)(u32)(sx / sy);
  out[SMOD32] = (sy == 0 || overflow32) ? 0 : (u64)(u32)(sx % sy);
  out[LDSX8] = (u64)(s64) * (volatile signed char *)&ctx->b;
  out[LDSX16] = (u64)(s64) * (volatile short *)&ctx->b;
  out[LDSX32] = (u64)(s64) * (volatile int *)&ctx->b;
#endif
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
