/* Layouts shared by the bootstrap stub (bootstrap.S) and the injector
 * (bootstrap_frame.h): the job the stub reads from the borrowed thread's
 * stack, the restore record it ends with, and the region it maps.
 *
 * On the borrowed thread's stack, below its red zone (rsp0 = the rsp it
 * was stopped with):
 *
 *   rsp0 - 128 .. rsp0          red zone: never written
 *   rsp0 - 272 .. rsp0 - 136    restore record (UBT_REC_*)
 *   ...                         block image (copied into the region)
 *   ...                         XSAVE image (64-byte aligned)
 *   D .. D + UBT_JOB_SIZE       job (UBT_JOB_*), D 64-byte aligned
 *
 * The stub runs with rsp = D (signal frames go below it) and rbx = D. It
 * ends with rsp = rsp0 - 272: popfq takes eflags, `ret 256` takes rip and
 * leaves rsp = rsp0 - 272 + 16 + 256 = rsp0. */
#ifndef UBTRACE_RUNTIME_INJECT_BOOTSTRAP_LAYOUT_H
#define UBTRACE_RUNTIME_INJECT_BOOTSTRAP_LAYOUT_H

/* job */
#define UBT_JOB_REGION 0x00
#define UBT_JOB_REGION_SIZE 0x08
#define UBT_JOB_BLOCK_SOURCE 0x10 /* address of the block image */
#define UBT_JOB_BLOCK_SIZE 0x18
#define UBT_JOB_XSTATE 0x20 /* address of the XSAVE image */
#define UBT_JOB_RFBM 0x28   /* XRSTOR's requested-feature bitmap */
#define UBT_JOB_MASK_ALL 0x30
/* out: the thread's mask at the stub's start */
#define UBT_JOB_SAVED_MASK 0x38
#define UBT_JOB_RECORD 0x40 /* address of the restore record */
/* -ERESTART* of the interrupted call, or 0 */
#define UBT_JOB_RESTART_CODE 0x48
#define UBT_JOB_INTERRUPTED_RIP 0x50 /* rip if the call ends with EINTR */
#define UBT_JOB_STATUS 0x58          /* out: UBT_JOB_STATUS_* */
#define UBT_JOB_ERROR 0x5c           /* out: -errno of a failed step */
#define UBT_JOB_COOKIE 0x60          /* the injector's mark on this job */
#define UBT_JOB_PENDING 0x68         /* scratch: rt_sigpending */
#define UBT_JOB_ACTION 0x70          /* scratch: rt_sigaction (32 bytes) */
#define UBT_JOB_SIZE 0xc0

/* status */
#define UBT_JOB_STATUS_STARTED 1
#define UBT_JOB_STATUS_MAPPED 2
#define UBT_JOB_STATUS_HANDED_OVER 3 /* the loader thread runs */
#define UBT_JOB_STATUS_RELEASED 4    /* results read (or given up), unmapped */
#define UBT_JOB_STATUS_MASK_FAILED 0x81
#define UBT_JOB_STATUS_MMAP_FAILED 0x82

/* restore record, at rsp0 - UBT_REC_BELOW_RSP */
#define UBT_REC_EFLAGS 0x00
#define UBT_REC_RIP 0x08
#define UBT_REC_R15 0x10
#define UBT_REC_R14 0x18
#define UBT_REC_R13 0x20
#define UBT_REC_R12 0x28
#define UBT_REC_RBP 0x30
#define UBT_REC_RBX 0x38
#define UBT_REC_R11 0x40
#define UBT_REC_R10 0x48
#define UBT_REC_R9 0x50
#define UBT_REC_R8 0x58
#define UBT_REC_RAX 0x60
#define UBT_REC_RCX 0x68
#define UBT_REC_RDX 0x70
#define UBT_REC_RSI 0x78
#define UBT_REC_RDI 0x80
#define UBT_REC_SIZE 0x88
#define UBT_REC_BELOW_RSP 272
#define UBT_REC_RET_POP 256 /* UBT_REC_BELOW_RSP - 16 */
#define UBT_RED_ZONE 128

/* the region: block, guard page, stack for the calls the stub makes */
#define UBT_REGION_GUARD 0x2000
#define UBT_REGION_STACK 0x3000
#define UBT_REGION_STACK_SIZE 0x40000
#define UBT_REGION_SIZE (UBT_REGION_STACK + UBT_REGION_STACK_SIZE)

#endif
