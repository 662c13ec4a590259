/* The code the injector runs in the target, copied as one blob into a code
 * cave (code_cave.h) of the target's own text. Position independent, no
 * relocations; every address it needs comes from its job (on the borrowed
 * thread's stack) or from the loader block (in the region it maps).
 *
 * ubt_bootstrap_stub: entered on the borrowed thread by the injector's one
 * register write (bootstrap_frame.h), with rbx = rsp = the job. From then
 * on it needs nobody: it finishes and puts the thread back by itself.
 *   1. block every signal, saving the thread's mask as it is now (or, at
 *      ubt_bootstrap_stub_masked, the kernel has just done so: the
 *      thread's own system call entry was turned into that call);
 *   2. mmap the region at the address the injector chose
 *      (MAP_FIXED_NOREPLACE), copy the block image into it, make the page
 *      under the call stack a guard, keep the region out of fork()
 *      children, name it (best effort);
 *   3. New thread: pthread_create(loader thread, block) on the region's
 *      stack; the region then belongs to the loader thread.
 *      Interrupted: run the load (below) on the region's stack, wait for
 *      the injector to read the results (bounded), unmap the region.
 *      errno is kept across the calls.
 *   4. put the vector state back (XRSTOR of the thread's XSAVE image);
 *      if the thread was stopped inside a system call that is to be
 *      restarted, and a signal arrived meanwhile that the thread will now
 *      handle, turn the restart into -EINTR as the kernel would have;
 *      restore the signal mask (from here on signals are delivered, on
 *      frames below rsp, which leave the restore record alone); load the
 *      general registers, popfq, and `ret 256`: rip and rsp in one
 *      instruction.
 * It never runs nanosleep or anything else that rewrites the thread's
 * restart block, so a call restarted through restart_syscall resumes with
 * the time it had left.
 *
 * Loader thread (.Lthunk, started by the stub's pthread_create): sets its
 * own signal mask (asynchronous signals blocked), notes its tid, detaches
 * itself, runs the load, waits for the injector's ack (bounded, and not at
 * all once the injector is gone), waits until the stub no longer touches
 * the region, and tail-calls munmap(region).
 *
 * The load (.Lload): dlopen(path), and with an entry name dlsym + call
 * entry(arg); the handle and result, or dlerror()'s text, then LOADED or
 * FAILED last (x86 stores are seen in order).
 */
#include "runtime/inject/bootstrap_layout.h"
#include "runtime/inject/loader_block_layout.h"

#define SYS_mmap 9
#define SYS_mprotect 10
#define SYS_munmap 11
#define SYS_rt_sigaction 13
#define SYS_rt_sigprocmask 14
#define SYS_madvise 28
#define SYS_kill 62
#define SYS_rt_sigpending 127
#define SYS_prctl 157
#define SYS_gettid 186
#define SYS_futex 202

#define SIG_SETMASK 2
#define MAP_STUB_FLAGS 0x100022 /* MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED_NOREPLACE */
#define MADV_DONTFORK 10
#define PR_SET_VMA 0x53564d41
#define FUTEX_WAIT_PRIVATE 0x80
#define SA_RESTART 0x10000000
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define EINTR 4
#define ESRCH 3

        .intel_syntax noprefix
        .text
        .p2align 6
        .globl ubt_bootstrap_begin
        .hidden ubt_bootstrap_begin
        .globl ubt_bootstrap_stub
        .hidden ubt_bootstrap_stub
        .globl ubt_bootstrap_stub_masked
        .hidden ubt_bootstrap_stub_masked
        .globl ubt_bootstrap_end
        .hidden ubt_bootstrap_end
ubt_bootstrap_begin:
ubt_bootstrap_stub:
        cld
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_STARTED
        mov edi, SIG_SETMASK
        lea rsi, [rbx + UBT_JOB_MASK_ALL]
        lea rdx, [rbx + UBT_JOB_SAVED_MASK]
        mov r10d, 8
        mov eax, SYS_rt_sigprocmask
        syscall
/* Entered here instead when the injector turned the thread's own system
 * call entry into this rt_sigprocmask (same arguments): rax = its result. */
ubt_bootstrap_stub_masked:
        test rax, rax
        jz .Lmasked
        mov dword ptr [rbx + UBT_JOB_ERROR], eax
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_MASK_FAILED
        jmp .Lregisters                 /* nothing was changed */

.Lmasked:
        mov rdi, qword ptr [rbx + UBT_JOB_REGION]
        mov rsi, qword ptr [rbx + UBT_JOB_REGION_SIZE]
        mov edx, 3                      /* PROT_READ | PROT_WRITE */
        mov r10d, MAP_STUB_FLAGS
        mov r8, -1
        xor r9d, r9d
        mov eax, SYS_mmap
        syscall
        cmp rax, qword ptr [rbx + UBT_JOB_REGION]
        je .Lmapped
        mov dword ptr [rbx + UBT_JOB_ERROR], eax
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_MMAP_FAILED
        cmp rax, -4095
        jae .Lrestore                   /* an error: nothing was mapped */
        mov rdi, rax                    /* mapped elsewhere: a kernel without */
        mov rsi, qword ptr [rbx + UBT_JOB_REGION_SIZE] /* MAP_FIXED_NOREPLACE */
        mov eax, SYS_munmap
        syscall
        jmp .Lrestore

.Lmapped:
        mov r12, rax                    /* r12: the block, at the region's start */
        mov rdi, rax
        mov rsi, qword ptr [rbx + UBT_JOB_BLOCK_SOURCE]
        mov rcx, qword ptr [rbx + UBT_JOB_BLOCK_SIZE]
        rep movsb
        lea rdi, [r12 + UBT_REGION_GUARD]
        mov esi, 4096
        xor edx, edx                    /* PROT_NONE */
        mov eax, SYS_mprotect
        syscall
        mov rdi, r12
        mov rsi, qword ptr [rbx + UBT_JOB_REGION_SIZE]
        mov edx, MADV_DONTFORK
        mov eax, SYS_madvise
        syscall
        mov edi, PR_SET_VMA
        xor esi, esi                    /* PR_SET_VMA_ANON_NAME */
        mov rdx, r12
        mov r10, qword ptr [rbx + UBT_JOB_REGION_SIZE]
        mov r8d, dword ptr [r12 + UBT_LB_NAME_OFFSET]
        add r8, r12
        mov eax, SYS_prctl
        syscall
        mov dword ptr [r12 + UBT_LB_STUB_STATE], UBT_STUB_MAPPED
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_MAPPED

        mov r13, rsp                    /* calls run on the region's stack */
        mov rsp, qword ptr [r12 + UBT_LB_STACK_TOP]
        call qword ptr [r12 + UBT_LB_ERRNO_LOCATION]
        mov r14, rax                    /* errno is the thread's: keep it */
        mov r15d, dword ptr [rax]
        cmp dword ptr [r12 + UBT_LB_MODE], UBT_LB_MODE_NEW_THREAD
        jne .Linterrupted

        lea rdi, [r12 + UBT_LB_PTHREAD]
        xor esi, esi
        lea rdx, [rip + .Lthunk]
        mov rcx, r12
        call qword ptr [r12 + UBT_LB_PTHREAD_CREATE]
        mov dword ptr [r14], r15d
        mov rsp, r13
        mov dword ptr [r12 + UBT_LB_CREATE_RESULT], eax
        test eax, eax
        jnz .Lcreate_failed
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_HANDED_OVER
        /* The last access to the region: it is the loader thread's now. */
        mov dword ptr [r12 + UBT_LB_STUB_STATE], UBT_STUB_DONE
        jmp .Lrestore

.Lcreate_failed:
        mov dword ptr [r12 + UBT_LB_FAILED_STEP], UBT_LB_STEP_CREATE
        mov dword ptr [r12 + UBT_LB_STATE], UBT_LB_STATE_FAILED
        jmp .Lrelease

.Linterrupted:
        mov rdi, r12
        call .Lload
        mov dword ptr [r14], r15d
        mov rsp, r13
.Lrelease:
        mov rdi, r12
        call .Lwait_ack
        mov rdi, r12
        mov rsi, qword ptr [rbx + UBT_JOB_REGION_SIZE]
        mov eax, SYS_munmap
        syscall
        mov dword ptr [rbx + UBT_JOB_STATUS], UBT_JOB_STATUS_RELEASED

.Lrestore:
        mov rdi, qword ptr [rbx + UBT_JOB_XSTATE]
        mov eax, dword ptr [rbx + UBT_JOB_RFBM]
        mov edx, dword ptr [rbx + UBT_JOB_RFBM + 4]
        xrstor64 [rdi]

        /* Restart or EINTR: the first pending signal the restored mask lets
         * through and that has a handler decides, by the kernel's rule. */
        mov rax, qword ptr [rbx + UBT_JOB_RESTART_CODE]
        test rax, rax
        jz .Lunmask
        lea rdi, [rbx + UBT_JOB_PENDING]
        mov esi, 8
        mov eax, SYS_rt_sigpending
        syscall
        test rax, rax
        jnz .Lunmask
        mov r12, qword ptr [rbx + UBT_JOB_PENDING]
        mov rax, qword ptr [rbx + UBT_JOB_SAVED_MASK]
        not rax
        and r12, rax
.Lnext_signal:
        test r12, r12
        jz .Lunmask
        bsf r13, r12
        btr r12, r13
        lea rdi, [r13 + 1]
        xor esi, esi
        lea rdx, [rbx + UBT_JOB_ACTION]
        mov r10d, 8
        mov eax, SYS_rt_sigaction
        syscall
        test rax, rax
        jnz .Lnext_signal
        mov rax, qword ptr [rbx + UBT_JOB_ACTION] /* sa_handler */
        cmp rax, 1                      /* SIG_DFL (0) and SIG_IGN (1): no */
        jbe .Lnext_signal               /* handler runs, the call restarts */
        mov rax, qword ptr [rbx + UBT_JOB_RESTART_CODE]
        cmp rax, -ERESTARTNOINTR
        je .Lunmask
        cmp rax, -ERESTARTSYS
        jne .Leintr                     /* NOHAND and RESTART_RESTARTBLOCK */
        test qword ptr [rbx + UBT_JOB_ACTION + 8], SA_RESTART
        jnz .Lunmask
.Leintr:
        mov rdx, qword ptr [rbx + UBT_JOB_RECORD]
        mov qword ptr [rdx + UBT_REC_RAX], -EINTR
        mov rax, qword ptr [rbx + UBT_JOB_INTERRUPTED_RIP]
        mov qword ptr [rdx + UBT_REC_RIP], rax

.Lunmask:
        mov edi, SIG_SETMASK
        lea rsi, [rbx + UBT_JOB_SAVED_MASK]
        xor edx, edx
        mov r10d, 8
        mov eax, SYS_rt_sigprocmask
        syscall

.Lregisters:
        mov rsp, qword ptr [rbx + UBT_JOB_RECORD]
        mov r15, qword ptr [rsp + UBT_REC_R15]
        mov r14, qword ptr [rsp + UBT_REC_R14]
        mov r13, qword ptr [rsp + UBT_REC_R13]
        mov r12, qword ptr [rsp + UBT_REC_R12]
        mov rbp, qword ptr [rsp + UBT_REC_RBP]
        mov rbx, qword ptr [rsp + UBT_REC_RBX]
        mov r11, qword ptr [rsp + UBT_REC_R11]
        mov r10, qword ptr [rsp + UBT_REC_R10]
        mov r9, qword ptr [rsp + UBT_REC_R9]
        mov r8, qword ptr [rsp + UBT_REC_R8]
        mov rax, qword ptr [rsp + UBT_REC_RAX]
        mov rcx, qword ptr [rsp + UBT_REC_RCX]
        mov rdx, qword ptr [rsp + UBT_REC_RDX]
        mov rsi, qword ptr [rsp + UBT_REC_RSI]
        mov rdi, qword ptr [rsp + UBT_REC_RDI]
        popfq
        ret UBT_REC_RET_POP

/* void load(block *rdi) */
.Lload:
        push rbx
        mov rbx, rdi
        mov dword ptr [rbx + UBT_LB_FAILED_STEP], UBT_LB_STEP_DLOPEN
        mov edi, dword ptr [rbx + UBT_LB_PATH_OFFSET]
        add rdi, rbx
        mov esi, dword ptr [rbx + UBT_LB_DLOPEN_MODE]
        call qword ptr [rbx + UBT_LB_DLOPEN]
        mov qword ptr [rbx + UBT_LB_HANDLE], rax
        test rax, rax
        jz .Lload_failed
        mov esi, dword ptr [rbx + UBT_LB_ENTRY_NAME_OFFSET]
        test esi, esi
        jz .Lload_done
        mov dword ptr [rbx + UBT_LB_FAILED_STEP], UBT_LB_STEP_DLSYM
        mov rdi, rax
        add rsi, rbx
        call qword ptr [rbx + UBT_LB_DLSYM]
        test rax, rax
        jz .Lload_failed
        mov edi, dword ptr [rbx + UBT_LB_ENTRY_ARG_OFFSET]
        add rdi, rbx
        call rax
        movsxd rax, eax
        mov qword ptr [rbx + UBT_LB_ENTRY_RESULT], rax
.Lload_done:
        mov dword ptr [rbx + UBT_LB_FAILED_STEP], 0
        mov eax, UBT_LB_STATE_LOADED
        jmp .Lload_publish
.Lload_failed:
        mov rax, qword ptr [rbx + UBT_LB_DLERROR]
        test rax, rax                   /* no dlerror (old glibc fallback) */
        jz .Lload_no_message
        call rax
        test rax, rax
        jz .Lload_no_message
        lea rdi, [rbx + UBT_LB_ERROR]
        mov ecx, UBT_LB_ERROR_MAX - 1   /* the last byte stays 0 */
.Lload_copy:
        mov dl, byte ptr [rax]
        test dl, dl
        jz .Lload_no_message
        mov byte ptr [rdi], dl
        inc rax
        inc rdi
        dec ecx
        jnz .Lload_copy
.Lload_no_message:
        mov eax, UBT_LB_STATE_FAILED
.Lload_publish:
        mov dword ptr [rbx + UBT_LB_STATE], eax
        pop rbx
        ret

/* void wait_ack(block *rdi): until the injector acks, it is gone, or
 * ack_polls sleeps of sleep_sec/nsec have passed. The sleep is a futex
 * wait with a relative timeout: it leaves the thread's restart block and
 * the timeout alone. */
.Lwait_ack:
        push rbx
        push r12
        sub rsp, 24
        mov rbx, rdi
        mov r12d, dword ptr [rbx + UBT_LB_ACK_POLLS]
.Lwait_loop:
        cmp dword ptr [rbx + UBT_LB_ACK], 0
        jne .Lwait_end
        test r12d, r12d
        jz .Lwait_end
        dec r12d
        mov edi, dword ptr [rbx + UBT_LB_CLI_PID]
        test edi, edi
        jz .Lwait_sleep
        xor esi, esi
        mov eax, SYS_kill
        syscall
        cmp rax, -ESRCH                 /* nobody will read the results */
        je .Lwait_end
.Lwait_sleep:
        lea rdi, [rbx + UBT_LB_ACK]
        xor edx, edx                    /* while it is 0 */
        call .Lnap
        jmp .Lwait_loop
.Lwait_end:
        add rsp, 24
        pop r12
        pop rbx
        ret

/* nap(u32 *rdi, u32 edx, block *rbx): futex wait while *rdi == edx, at
 * most sleep_sec/nsec. Uses the caller's 16 bytes at [rsp + 8]. */
.Lnap:
        mov rax, qword ptr [rbx + UBT_LB_SLEEP_SEC]
        mov qword ptr [rsp + 8], rax
        mov rax, qword ptr [rbx + UBT_LB_SLEEP_NSEC]
        mov qword ptr [rsp + 16], rax
        mov esi, FUTEX_WAIT_PRIVATE
        lea r10, [rsp + 8]
        mov eax, SYS_futex
        syscall
        ret

/* void *thunk(block *rdi): the loader thread. */
.Lthunk:
        endbr64
        push rbx
        push r12
        sub rsp, 24
        mov rbx, rdi
        mov edi, SIG_SETMASK            /* it inherited "all blocked" */
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
        mov rdi, rbx
        call .Lload
        mov rdi, rbx
        call .Lwait_ack
.Lthunk_wait_stub:                      /* the stub may still be on its way out */
        mov edx, dword ptr [rbx + UBT_LB_STUB_STATE]
        cmp edx, UBT_STUB_DONE
        je .Lthunk_release
        lea rdi, [rbx + UBT_LB_STUB_STATE]
        call .Lnap
        jmp .Lthunk_wait_stub
.Lthunk_release:
        mov rdi, qword ptr [rbx + UBT_LB_REGION_BASE]
        mov rsi, qword ptr [rbx + UBT_LB_REGION_SIZE]
        mov rax, qword ptr [rbx + UBT_LB_MUNMAP]
        add rsp, 24
        pop r12
        pop rbx
        jmp rax                         /* returns NULL to pthread's start code */
ubt_bootstrap_end:

        .section .note.GNU-stack,"",@progbits
