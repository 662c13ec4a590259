// The functions of test_functions.S and test_functions_c.c.
#pragma once

#include <cstdint>
#include <setjmp.h>

extern "C" {
extern long hk_data;
long hk_rip_lea(long x);
long hk_getpid(void);
long hk_fork(void);
void hk_syscall_ret(void);
long hk_rip_mov(long x);
long hk_rip_cmp(long x);
long hk_short_jcc(long x);
long hk_endbr(long a, long b);
long hk_frame(long a, long b, long c, long d, long e, long f);
long hk_frame_resume1(long a, long b, long c, long d, long e, long f);
long hk_frame_resume4(long a, long b, long c, long d, long e, long f);
long hk_flags(long a, long b, long df);
void hk_flags_probe();
long hk_helper_one();
long hk_helper_inc(long x);
long hk_call_first(long x);
long hk_push_call(long x);
long hk_call_rip(long x);
long hk_jmp_first(long x);
void hk_tiny1();
long hk_tiny2(long x);
long hk_tiny3(long x);
long hk_loop_head(long n);
void hk_starts_int3();
long hk_starts_jrcxz(long x);
double hk_fma(double a, double b, double c);
long hk_invoke(long (*fn)(long), long x);
void hk_invoke_ret();

// test_functions_c.c
long hk_fib(long n);
extern long hk_fib_calls;
long hk_jumper(jmp_buf *env, long x);
long hk_counted(long x);
long hk_depth(long n);
long hk_eight(long a, long b, long c, long d, long e, long f, long g, long h);
}

// hk_ymm_add(__m256d, __m256d) is called from assembly only, through
// hk_ymm_run, so its arguments really are in ymm0/ymm1.
extern "C" void hk_ymm_add();
extern "C" void hk_ymm_run(const double *a, const double *b, double *out);
extern "C" void hk_zmm_add();
extern "C" void hk_zmm_run(const double *a, const double *b, double *out);
// Vector registers live across hk_ymm_mid_probe / hk_zmm_mid_probe, in the
// middle of the function (test_functions.S).
extern "C" void hk_ymm_mid(const uint8_t *in, uint8_t *out);
extern "C" void hk_ymm_mid_probe();
extern "C" void hk_zmm_mid(const uint8_t *in, uint8_t *out);
extern "C" void hk_zmm_mid_probe();
extern "C" long double hk_ld_sum(long double a, long double b);
