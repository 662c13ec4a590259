#include "runtime/helpers/libcalls.h"

#include "runtime/probe_safe.h"

#include <cstdint>

using namespace ubtrace::runtime;

extern "C" {

void *ubt_libcall_memcpy(void *dst, const void *src, size_t n) {
  probe_safe::copy_bytes(dst, src, n);
  return dst;
}

void *ubt_libcall_memmove(void *dst, const void *src, size_t n) {
  probe_safe::move_bytes(dst, src, n);
  return dst;
}

void *ubt_libcall_memset(void *dst, int value, size_t n) {
  probe_safe::fill_bytes(dst, static_cast<uint8_t>(value), n);
  return dst;
}

} // extern "C"
