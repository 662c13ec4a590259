// The loader block: the data the code in the target (bootstrap.S) works
// from, and the results it writes back. The injector builds its image
// (build_loader_block), the bootstrap stub copies it to the start of the
// region it maps (bootstrap_layout.h), and the injector reads the results
// there through /proc/PID/mem.
#pragma once

#include "runtime/inject/bootstrap_layout.h"
#include "runtime/inject/loader_block_layout.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::runtime::inject {

struct LoaderBlock {
  // In: functions of the target's glibc.
  uint64_t dlopen, dlsym, dlerror, pthread_self, pthread_detach, munmap;
  // In: the region, unmapped by whoever finishes last with it.
  uint64_t region_base, region_size;
  // Out.
  uint64_t handle;      // dlopen's result
  int64_t entry_result; // the entry's int, sign-extended
  // In: the loader thread's signal mask; the ack poll interval.
  uint64_t sigmask;
  int64_t sleep_sec, sleep_nsec;
  uint32_t ack_polls; // in: polls before giving up waiting for the ack
  uint32_t tid;       // out: the thread that ran dlopen
  uint32_t state;     // out: UBT_LB_STATE_*
  uint32_t ack;       // in: set by the injector once it read the results
  uint32_t dlopen_mode;
  uint32_t failed_step; // out: UBT_LB_STEP_*
  uint64_t pthread;     // out: pthread_create's pthread_t
  uint64_t pthread_create, errno_location;
  uint64_t stack_top;    // in: for the calls the stub makes
  uint32_t mode;         // in: UBT_LB_MODE_*
  uint32_t cli_pid;      // in: the injector, as the target sees it (0: unknown)
  uint32_t stub_state;   // out: UBT_STUB_*
  int32_t create_result; // out: pthread_create's
  uint32_t path_offset, entry_name_offset, entry_arg_offset, name_offset;
  uint64_t cookie; // in: the injector's, also on the stub's job
  char pad[UBT_LB_ERROR - UBT_LB_COOKIE - 8];
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
static_assert(offsetof(LoaderBlock, pthread_create) == UBT_LB_PTHREAD_CREATE);
static_assert(offsetof(LoaderBlock, errno_location) == UBT_LB_ERRNO_LOCATION);
static_assert(offsetof(LoaderBlock, stack_top) == UBT_LB_STACK_TOP);
static_assert(offsetof(LoaderBlock, mode) == UBT_LB_MODE);
static_assert(offsetof(LoaderBlock, cli_pid) == UBT_LB_CLI_PID);
static_assert(offsetof(LoaderBlock, stub_state) == UBT_LB_STUB_STATE);
static_assert(offsetof(LoaderBlock, create_result) == UBT_LB_CREATE_RESULT);
static_assert(offsetof(LoaderBlock, path_offset) == UBT_LB_PATH_OFFSET);
static_assert(offsetof(LoaderBlock, entry_name_offset) ==
              UBT_LB_ENTRY_NAME_OFFSET);
static_assert(offsetof(LoaderBlock, entry_arg_offset) ==
              UBT_LB_ENTRY_ARG_OFFSET);
static_assert(offsetof(LoaderBlock, name_offset) == UBT_LB_NAME_OFFSET);
static_assert(offsetof(LoaderBlock, cookie) == UBT_LB_COOKIE);
static_assert(offsetof(LoaderBlock, error) == UBT_LB_ERROR);
static_assert(sizeof(LoaderBlock) == UBT_LB_STRINGS);

// What goes into a block besides the addresses the injector knows.
struct LoaderStrings {
  std::string path;       // the agent, as the target opens it
  std::string entry_name; // "" = dlopen only
  std::string entry_arg;
};

// The block image: the fixed part, then the region's name, the path, the
// entry name and argument, each NUL-terminated. Errors name what is too
// long.
Result<std::vector<uint8_t>> build_loader_block(const LoaderBlock &fixed,
                                                const LoaderStrings &strings);

// The code the target runs (bootstrap.S), position independent, in this
// binary's text: the injector copies [begin, end) into a code cave.
extern "C" const unsigned char ubt_bootstrap_begin[];
extern "C" const unsigned char ubt_bootstrap_stub[];
extern "C" const unsigned char ubt_bootstrap_stub_masked[];
extern "C" const unsigned char ubt_bootstrap_end[];

} // namespace ubtrace::runtime::inject
