/* Shared by the JIT's test programs: the ctx each program gets (the tests
 * fill it), and fixed-width types. */
#ifndef UBT_JIT_COMMON_H
#define UBT_JIT_COMMON_H

typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef int s32;
typedef unsigned char u8;

struct jit_args {
  u64 arg[8];
};

#endif
