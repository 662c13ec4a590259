/* The loader thread's start routine, copied into the target.
 *
 *   void *ubt_loader_thunk(struct LoaderBlock *block)   (rdi = block)
 *
 * It runs in a thread the target's own pthread_create made, so it has a
 * real thread descriptor and TLS: dlopen, malloc and the agent's
 * constructors behave as in any thread of the program. Steps:
 *   1. block asynchronous signals (block->sigmask), note its tid, mark the
 *      block RUNNING, detach itself (nobody joins it);
 *   2. dlopen(path, mode); if an entry name is set, dlsym + call
 *      entry(entry_arg); record the handle and the entry's result, or
 *      dlerror()'s text, and publish LOADED or FAILED last (x86 stores
 *      are seen in order);
 *   3. wait (nanosleep polls) for the injector's ack, at most ack_polls
 *      times, so the results are read before they go away;
 *   4. tail-call munmap(region) with the stack as it was at entry: munmap
 *      returns straight to pthread's start code, so no instruction of the
 *      unmapped region runs after the jump, and the thread exits.
 * Position independent, no relocations: every address comes from the
 * block.
 */
#include "runtime/inject/loader_block_layout.h"

#define SYS_rt_sigprocmask 14
#define SYS_nanosleep 35
#define SYS_gettid 186

        .intel_syntax noprefix
        .text
        .p2align 4
        .globl ubt_loader_thunk_begin
        .hidden ubt_loader_thunk_begin
        .globl ubt_loader_thunk_end
        .hidden ubt_loader_thunk_end
ubt_loader_thunk_begin:
        push rbx
        push r12
        sub rsp, 8                      /* calls need rsp % 16 == 0 */
        mov rbx, rdi

        mov edi, 0                      /* SIG_BLOCK */
        lea rsi, [rbx + UBT_LB_SIGMASK]
        xor edx, edx
        mov r10d, 8
        mov eax, SYS_rt_sigprocmask
        syscall
        mov eax, SYS_gettid
        syscall
        mov dword ptr [rbx + UBT_LB_TID], eax
        mov dword ptr [rbx + UBT_LB_STATE], UBT_LB_STATE_RUNNING

        call qword ptr [rbx + UBT_LB_PTHREAD_SELF]
        mov rdi, rax
        call qword ptr [rbx + UBT_LB_PTHREAD_DETACH]

        mov dword ptr [rbx + UBT_LB_FAILED_STEP], UBT_LB_STEP_DLOPEN
        lea rdi, [rbx + UBT_LB_PATH]
        mov esi, dword ptr [rbx + UBT_LB_DLOPEN_MODE]
        call qword ptr [rbx + UBT_LB_DLOPEN]
        mov qword ptr [rbx + UBT_LB_HANDLE], rax
        test rax, rax
        jz .Lfailed

        cmp byte ptr [rbx + UBT_LB_ENTRY_NAME], 0
        je .Lloaded
        mov dword ptr [rbx + UBT_LB_FAILED_STEP], UBT_LB_STEP_DLSYM
        mov rdi, rax
        lea rsi, [rbx + UBT_LB_ENTRY_NAME]
        call qword ptr [rbx + UBT_LB_DLSYM]
        test rax, rax
        jz .Lfailed
        lea rdi, [rbx + UBT_LB_ENTRY_ARG]
        call rax
        movsxd rax, eax
        mov qword ptr [rbx + UBT_LB_ENTRY_RESULT], rax

.Lloaded:
        mov dword ptr [rbx + UBT_LB_FAILED_STEP], 0
        mov eax, UBT_LB_STATE_LOADED
        jmp .Lpublish

.Lfailed:
        mov rax, qword ptr [rbx + UBT_LB_DLERROR]
        test rax, rax                   /* no dlerror (old glibc fallback) */
        jz .Lno_message
        call rax
        test rax, rax
        jz .Lno_message
        lea rdi, [rbx + UBT_LB_ERROR]
        mov ecx, UBT_LB_ERROR_MAX - 1   /* the block's last byte stays 0 */
.Lcopy:
        mov dl, byte ptr [rax]
        test dl, dl
        jz .Lno_message
        mov byte ptr [rdi], dl
        inc rax
        inc rdi
        dec ecx
        jnz .Lcopy
.Lno_message:
        mov eax, UBT_LB_STATE_FAILED

.Lpublish:
        mov dword ptr [rbx + UBT_LB_STATE], eax

        mov r12d, dword ptr [rbx + UBT_LB_ACK_POLLS]
.Lwait_ack:
        cmp dword ptr [rbx + UBT_LB_ACK], 0
        jne .Lrelease
        test r12d, r12d
        jz .Lrelease
        dec r12d
        lea rdi, [rbx + UBT_LB_SLEEP_SEC]
        xor esi, esi
        mov eax, SYS_nanosleep
        syscall
        jmp .Lwait_ack

.Lrelease:
        mov rdi, qword ptr [rbx + UBT_LB_REGION_BASE]
        mov rsi, qword ptr [rbx + UBT_LB_REGION_SIZE]
        mov rax, qword ptr [rbx + UBT_LB_MUNMAP]
        add rsp, 8
        pop r12
        pop rbx
        jmp rax
ubt_loader_thunk_end:

        .section .note.GNU-stack,"",@progbits
