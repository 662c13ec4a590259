// Functions with the prologue shapes an inline hook must handle. Each is
// `.size`d so tests can pass exact function bounds. Padding between them is
// int3, as a linker would leave it.
        .intel_syntax noprefix
        .text

#define FUNC(name) .p2align 4, 0xcc; .globl name; .type name, @function; name:
#define END(name) .size name, . - name

// rip-relative lea first: returns hk_data + x.
FUNC(hk_rip_lea)
        lea rax, [rip + hk_data]
        mov rax, [rax]
        add rax, rdi
        ret
END(hk_rip_lea)

// rip-relative load first: returns hk_data + x.
FUNC(hk_rip_mov)
        mov rax, [rip + hk_data]
        add rax, rdi
        ret
END(hk_rip_mov)

// rip-relative compare with an immediate first: x + 1 if hk_data == 1000.
FUNC(hk_rip_cmp)
        cmp qword ptr [rip + hk_data], 1000
        jne 1f
        lea rax, [rdi + 1]
        ret
1:      xor eax, eax
        ret
END(hk_rip_cmp)

// A short jcc inside the first 5 bytes: 2 if x == 0, else 1.
FUNC(hk_short_jcc)
        test rdi, rdi
        je 1f
        mov eax, 1
        ret
1:      mov eax, 2
        ret
END(hk_short_jcc)

// endbr64 first: returns a + 2*b.
FUNC(hk_endbr)
        endbr64
        push rbx
        mov rbx, rdi
        lea rax, [rbx + rsi * 2]
        pop rbx
        ret
END(hk_endbr)

// A frame-pointer prologue: instruction starts at +1 and +4 inside the
// jump, so the rel32 must carry trap bytes there. Returns the sum of the six
// arguments.
FUNC(hk_frame)
        push rbp
        mov rbp, rsp
        lea rax, [rdi + rsi]
        add rax, rdx
        add rax, rcx
        add rax, r8
        add rax, r9
        pop rbp
        ret
END(hk_frame)

// hk_frame entered as a thread would resume it after being stopped past
// its first instruction (resume1), or past its second (resume4): once
// hk_frame is patched, these land on trap bytes inside the jump.
FUNC(hk_frame_resume1)
        push rbp
        jmp hk_frame + 1
END(hk_frame_resume1)
FUNC(hk_frame_resume4)
        push rbp
        mov rbp, rsp
        jmp hk_frame + 4
END(hk_frame_resume4)

// Flags live across a probe point in the middle of a function:
// hk_flags(a, b, df) compares a with b, sets DF if df != 0, and at
// hk_flags_probe (a 5-byte mov that keeps the flags) is probed; returns
// OF|DF|SF|ZF|AF|PF|CF as they were after the compare.
FUNC(hk_flags)
        test rdx, rdx
        jz 4f
        std
4:      cmp rdi, rsi
        .globl hk_flags_probe
hk_flags_probe:
        mov eax, 0
        pushfq
        pop rax
        cld
        and eax, 0xCD5
        ret
END(hk_flags)

// Returns 1; keeps every other register.
FUNC(hk_helper_one)
        mov eax, 1
        ret
END(hk_helper_one)

// Returns x + 1.
FUNC(hk_helper_inc)
        lea rax, [rdi + 1]
        ret
END(hk_helper_inc)

// A call first: returns 1 + x.
FUNC(hk_call_first)
        call hk_helper_one
        add rax, rdi
        ret
END(hk_call_first)

// A call as the second displaced instruction: returns 1 + x.
FUNC(hk_push_call)
        push rbx
        call hk_helper_one
        add rax, rdi
        pop rbx
        ret
END(hk_push_call)

// An indirect call through [rip] first: returns 1 + x.
FUNC(hk_call_rip)
        call qword ptr [rip + hk_helper_ptr]
        add rax, rdi
        ret
END(hk_call_rip)

// A 5-byte tail jump: returns x + 1.
FUNC(hk_jmp_first)
        .byte 0xE9
        .long hk_helper_inc - . - 4
END(hk_jmp_first)

// Too short for a jump: 1, 2 and 3 bytes.
FUNC(hk_tiny1)
        ret
END(hk_tiny1)
FUNC(hk_tiny2)
        xchg eax, edi
        ret
END(hk_tiny2)
FUNC(hk_tiny3)
        mov eax, edi
        ret
END(hk_tiny3)

// A loop whose head is inside the first 5 bytes: returns n (n >= 1).
FUNC(hk_loop_head)
        xor eax, eax
2:      inc rax
        cmp rax, rdi
        jl 2b
        ret
END(hk_loop_head)

// Starts with a breakpoint: never hookable.
FUNC(hk_starts_int3)
        int3
        ret
END(hk_starts_int3)

// Starts with jrcxz (not relocated): never hookable.
FUNC(hk_starts_jrcxz)
        jrcxz 3f
3:      mov rax, rdi
        ret
END(hk_starts_jrcxz)

// Vector arguments and results.
// double hk_fma(double a, double b, double c) = a * b + c
FUNC(hk_fma)
        mulsd xmm0, xmm1
        addsd xmm0, xmm2
        ret
END(hk_fma)

// __m256d hk_ymm_add(__m256d a, __m256d b) = a + b (AVX)
FUNC(hk_ymm_add)
        vaddpd ymm0, ymm0, ymm1
        ret
END(hk_ymm_add)

// void hk_ymm_run(const double a[4], const double b[4], double out[4]):
// out = hk_ymm_add(a, b) with the arguments in ymm0/ymm1 (a compiler may
// pass __m256d in memory to a function it does not know uses AVX).
FUNC(hk_ymm_run)
        vmovupd ymm0, [rdi]
        vmovupd ymm1, [rsi]
        push rdx
        call hk_ymm_add
        pop rdx
        vmovupd [rdx], ymm0
        vzeroupper
        ret
END(hk_ymm_run)

// long double hk_ld_sum(long double a, long double b) = a + b (st0)
FUNC(hk_ld_sum)
        fld tbyte ptr [rsp + 8]
        fld tbyte ptr [rsp + 24]
        faddp st(1), st
        ret
END(hk_ld_sum)

// __m512d hk_zmm_add(__m512d a, __m512d b) = a + b, and its caller
// hk_zmm_run(a, b, out) as for the ymm pair (AVX-512F).
FUNC(hk_zmm_add)
        vaddpd zmm0, zmm0, zmm1
        ret
END(hk_zmm_add)
FUNC(hk_zmm_run)
        vmovupd zmm0, [rdi]
        vmovupd zmm1, [rsi]
        push rdx
        call hk_zmm_add
        pop rdx
        vmovupd [rdx], zmm0
        vzeroupper
        ret
END(hk_zmm_run)

// Vector registers live across a probe point in the middle of a function:
// hk_ymm_mid(in, out) loads ymm0-15 from in[16][32], passes hk_ymm_mid_probe
// (a 5-byte mov) and stores them to out (AVX). hk_zmm_mid the same with
// zmm0-31 (in[32][64]) and k1-7 (from in[32][64] on, 8 bytes each), stored
// likewise (AVX-512F).
FUNC(hk_ymm_mid)
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        vmovdqu ymm\i, [rdi + \i*32]
        .endr
        .globl hk_ymm_mid_probe
hk_ymm_mid_probe:
        mov eax, 0
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        vmovdqu [rsi + \i*32], ymm\i
        .endr
        vzeroupper
        ret
END(hk_ymm_mid)
FUNC(hk_zmm_mid)
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vmovdqu64 zmm\i, [rdi + \i*64]
        .endr
        .irp i,1,2,3,4,5,6,7
        kmovw k\i, [rdi + 2048 + \i*8]
        .endr
        .globl hk_zmm_mid_probe
hk_zmm_mid_probe:
        mov eax, 0
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        vmovdqu64 [rsi + \i*64], zmm\i
        .endr
        .irp i,1,2,3,4,5,6,7
        kmovw [rsi + 2048 + \i*8], k\i
        .endr
        vzeroupper
        ret
END(hk_zmm_mid)

// long hk_invoke(long (*fn)(long), long x): calls fn(x) from a known
// address, hk_invoke_ret, so tests can check return addresses.
FUNC(hk_invoke)
        mov rax, rdi
        mov rdi, rsi
        call rax
        .globl hk_invoke_ret
hk_invoke_ret:
        ret
END(hk_invoke)

// long hk_getpid(void): getpid as libc's wrapper makes it.
FUNC(hk_getpid)
        mov eax, 39
        syscall
        ret
END(hk_getpid)

// `syscall; ret`: a rewritten site's way for calls nobody sees.
FUNC(hk_syscall_ret)
        syscall
        ret
END(hk_syscall_ret)

// long hk_fork(void): fork as a raw clone-family call, 0 in the child.
FUNC(hk_fork)
        mov eax, 57
        syscall
        ret
END(hk_fork)

        .data
        .p2align 3
        .globl hk_data
hk_data:
        .quad 1000
hk_helper_ptr:
        .quad hk_helper_one

        .section .note.GNU-stack, "", @progbits
