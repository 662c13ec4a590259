// The memory functions JIT'd probe code calls (LLVM lowers large copies and
// fills to memcpy/memmove/memset calls): the agent hands these out instead
// of libc's, which the traced program may have hooked (probe_safe.h).
#pragma once

#include <cstddef>

extern "C" {
void *ubt_libcall_memcpy(void *dst, const void *src, size_t n);
void *ubt_libcall_memmove(void *dst, const void *src, size_t n);
void *ubt_libcall_memset(void *dst, int value, size_t n);
}
