// The loader block: the data the loader thread (loader_thunk.S) works
// from, written into the target by the injector, and the results it
// writes back. One block per injection, in the scratch region the
// injector maps in the target (injector.cpp lays the region out).
#pragma once

#include "runtime/inject/loader_block_layout.h"

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::inject {

struct LoaderBlock {
  // In: functions of the target's glibc.
  uint64_t dlopen, dlsym, dlerror, pthread_self, pthread_detach, munmap;
  // In: the scratch region, unmapped by the thread when it is done.
  uint64_t region_base, region_size;
  // Out.
  uint64_t handle;      // dlopen's result
  int64_t entry_result; // the entry's int, sign-extended
  // In: kernel sigset the thread blocks first; its ack poll interval.
  uint64_t sigmask;
  int64_t sleep_sec, sleep_nsec;
  uint32_t ack_polls; // in: polls before it gives up waiting for the ack
  uint32_t tid;       // out: the loader thread's tid
  uint32_t state;     // out: UBT_LB_STATE_*
  uint32_t ack;       // in: set by the injector once it read the results
  uint32_t dlopen_mode;
  uint32_t failed_step; // out: UBT_LB_STEP_*
  uint64_t pthread;     // out: pthread_create's pthread_t
  char pad[UBT_LB_PATH - UBT_LB_PTHREAD - 8];
  char path[UBT_LB_PATH_MAX];
  char entry_name[UBT_LB_ENTRY_NAME_MAX]; // "" = dlopen only
  char entry_arg[UBT_LB_ENTRY_ARG_MAX];
  char error[UBT_LB_ERROR_MAX]; // out: dlerror()'s text
};

static_assert(offsetof(LoaderBlock, dlopen) == UBT_LB_DLOPEN);
static_assert(offsetof(LoaderBlock, dlsym) == UBT_LB_DLSYM);
static_assert(offsetof(LoaderBlock, dlerror) == UBT_LB_DLERROR);
static_assert(offsetof(LoaderBlock, pthread_self) == UBT_LB_PTHREAD_SELF);
static_assert(offsetof(LoaderBlock, pthread_detach) == UBT_LB_PTHREAD_DETACH);
static_assert(offsetof(LoaderBlock, munmap) == UBT_LB_MUNMAP);
static_assert(offsetof(LoaderBlock, region_base) == UBT_LB_REGION_BASE);
static_assert(offsetof(LoaderBlock, region_size) == UBT_LB_REGION_SIZE);
static_assert(offsetof(LoaderBlock, handle) == UBT_LB_HANDLE);
static_assert(offsetof(LoaderBlock, entry_result) == UBT_LB_ENTRY_RESULT);
static_assert(offsetof(LoaderBlock, sigmask) == UBT_LB_SIGMASK);
static_assert(offsetof(LoaderBlock, sleep_sec) == UBT_LB_SLEEP_SEC);
static_assert(offsetof(LoaderBlock, sleep_nsec) == UBT_LB_SLEEP_NSEC);
static_assert(offsetof(LoaderBlock, ack_polls) == UBT_LB_ACK_POLLS);
static_assert(offsetof(LoaderBlock, tid) == UBT_LB_TID);
static_assert(offsetof(LoaderBlock, state) == UBT_LB_STATE);
static_assert(offsetof(LoaderBlock, ack) == UBT_LB_ACK);
static_assert(offsetof(LoaderBlock, dlopen_mode) == UBT_LB_DLOPEN_MODE);
static_assert(offsetof(LoaderBlock, failed_step) == UBT_LB_FAILED_STEP);
static_assert(offsetof(LoaderBlock, pthread) == UBT_LB_PTHREAD);
static_assert(offsetof(LoaderBlock, path) == UBT_LB_PATH);
static_assert(offsetof(LoaderBlock, entry_name) == UBT_LB_ENTRY_NAME);
static_assert(offsetof(LoaderBlock, entry_arg) == UBT_LB_ENTRY_ARG);
static_assert(offsetof(LoaderBlock, error) == UBT_LB_ERROR);
static_assert(sizeof(LoaderBlock) == UBT_LB_SIZE);

// The thunk's machine code, position independent, in this binary's text:
// the injector copies [begin, end) into the target.
extern "C" const unsigned char ubt_loader_thunk_begin[];
extern "C" const unsigned char ubt_loader_thunk_end[];

} // namespace ubtrace::runtime::inject
