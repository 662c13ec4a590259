// Functions the hook benchmark calls: a frame-pointer prologue (a jump with
// trap bytes in its rel32) and a 3-byte function (the int3 path).
        .intel_syntax noprefix
        .text
        .p2align 4, 0xcc
        .globl hb_target
        .type hb_target, @function
hb_target:
        push rbp
        mov rbp, rsp
        lea rax, [rdi + 1]
        pop rbp
        ret
        .size hb_target, . - hb_target

// The same code for the return-hook-only benchmarks: a site keeps the
// trampoline of the first hook made on it (a return-only site gets the
// lean return entry), and sites live as long as the process.
        .p2align 4, 0xcc
        .globl hb_ret_target
        .type hb_ret_target, @function
hb_ret_target:
        push rbp
        mov rbp, rsp
        lea rax, [rdi + 1]
        pop rbp
        ret
        .size hb_ret_target, . - hb_ret_target

        .p2align 4, 0xcc
        .globl hb_tiny
        .type hb_tiny, @function
hb_tiny:
        mov eax, edi
        ret
        .size hb_tiny, . - hb_tiny

        .section .note.GNU-stack, "", @progbits
