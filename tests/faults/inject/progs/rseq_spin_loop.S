/* ubt_rseq_spin(struct rseq *rs, struct rseq_cs *cs, volatile int *stop,
 *               volatile long *aborts, volatile int *broken)
 * Spins inside a restartable sequence's critical section until *stop: the
 * kernel must abort it (to .Labort, which counts and re-arms it) whenever
 * the thread is preempted or stopped there, clearing rs->rseq_cs as it
 * does. So while rip is in the section, rs->rseq_cs is always cs; finding
 * it cleared there means the section went on after an interruption the
 * kernel never aborted (*broken = 1). */
        .intel_syntax noprefix
        .text
        .globl ubt_rseq_spin
        .type ubt_rseq_spin, @function
ubt_rseq_spin:
        lea rax, [rip + .Lstart]
        mov qword ptr [rsi + 8], rax      /* start_ip */
        lea r9, [rip + .Lend]
        sub r9, rax
        mov qword ptr [rsi + 16], r9      /* post_commit_offset */
        lea rax, [rip + .Labort]
        mov qword ptr [rsi + 24], rax     /* abort_ip */
.Larm:
        mov qword ptr [rdi + 8], rsi      /* rs->rseq_cs = cs */
.Lstart:
        cmp qword ptr [rdi + 8], rsi
        jne .Lbroken
        cmp dword ptr [rdx], 0
        je .Lstart
.Lend:
        mov qword ptr [rdi + 8], 0
        ret
        .long 0x53053053                  /* RSEQ_SIG, right before the handler */
.Labort:
        lock inc qword ptr [rcx]
        jmp .Larm
.Lbroken:
        mov dword ptr [r8], 1
        mov qword ptr [rdi + 8], 0
        ret
        .size ubt_rseq_spin, . - ubt_rseq_spin

        .section .note.GNU-stack,"",@progbits
