/* Byte offsets in the loader block (loader_block.h), shared by C++ and
 * bootstrap.S. The block is the first thing in the region the bootstrap
 * stub maps; the injector builds its image, the stub copies it there.
 * Strings follow the fixed part and are found through their offsets, so
 * the image is only as long as they are (it travels on the borrowed
 * thread's stack, see bootstrap_frame.h). */
#ifndef UBTRACE_RUNTIME_INJECT_LOADER_BLOCK_LAYOUT_H
#define UBTRACE_RUNTIME_INJECT_LOADER_BLOCK_LAYOUT_H

#define UBT_LB_DLOPEN 0x00
#define UBT_LB_DLSYM 0x08
#define UBT_LB_DLERROR 0x10
#define UBT_LB_PTHREAD_SELF 0x18
#define UBT_LB_PTHREAD_DETACH 0x20
#define UBT_LB_MUNMAP 0x28
#define UBT_LB_REGION_BASE 0x30
#define UBT_LB_REGION_SIZE 0x38
#define UBT_LB_HANDLE 0x40
#define UBT_LB_ENTRY_RESULT 0x48
#define UBT_LB_SIGMASK 0x50
#define UBT_LB_SLEEP_SEC 0x58
#define UBT_LB_SLEEP_NSEC 0x60
#define UBT_LB_ACK_POLLS 0x68
#define UBT_LB_TID 0x6c
#define UBT_LB_STATE 0x70
#define UBT_LB_ACK 0x74
#define UBT_LB_DLOPEN_MODE 0x78
#define UBT_LB_FAILED_STEP 0x7c
#define UBT_LB_PTHREAD 0x80
#define UBT_LB_PTHREAD_CREATE 0x88
#define UBT_LB_ERRNO_LOCATION 0x90
#define UBT_LB_STACK_TOP 0x98
#define UBT_LB_MODE 0xa0
#define UBT_LB_CLI_PID 0xa4
#define UBT_LB_STUB_STATE 0xa8
#define UBT_LB_CREATE_RESULT 0xac
#define UBT_LB_PATH_OFFSET 0xb0
#define UBT_LB_ENTRY_NAME_OFFSET 0xb4 /* 0: dlopen only */
#define UBT_LB_ENTRY_ARG_OFFSET 0xb8
#define UBT_LB_NAME_OFFSET 0xbc /* the region's name for PR_SET_VMA */
#define UBT_LB_COOKIE 0xc0      /* the injector's mark: this block is its own */
#define UBT_LB_ERROR 0x100
#define UBT_LB_STRINGS 0x300
#define UBT_LB_MAX_SIZE 0x2000 /* the block's part of the region */

#define UBT_LB_ERROR_MAX 0x200
#define UBT_LB_PATH_MAX 0x1000
#define UBT_LB_ENTRY_NAME_MAX 0x100
#define UBT_LB_ENTRY_ARG_MAX 0x400

/* mode */
#define UBT_LB_MODE_NEW_THREAD 1
#define UBT_LB_MODE_INTERRUPTED 2

/* state: written by whoever runs dlopen (loader thread or stub) */
#define UBT_LB_STATE_RUNNING 1
#define UBT_LB_STATE_LOADED 2
#define UBT_LB_STATE_FAILED 3

/* failed_step */
#define UBT_LB_STEP_DLOPEN 1
#define UBT_LB_STEP_DLSYM 2
#define UBT_LB_STEP_CREATE 3 /* pthread_create failed: create_result */

/* stub_state: written by the stub on the borrowed thread */
#define UBT_STUB_MAPPED 1
#define UBT_STUB_DONE 2 /* it no longer touches the region */

#endif
