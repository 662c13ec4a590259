// Shared helpers of the hook tests.
#pragma once

#include "runtime/hook/hook.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <vector>

namespace ubtrace::runtime::hook::testing {

template <class F> uint64_t addr(F *fn) {
  return reinterpret_cast<uint64_t>(fn);
}

// The function's bounds from the dynamic symbol table (the test binary is
// linked with its symbols exported).
template <class F> FunctionBounds bounds_of(F *fn) {
  Dl_info info;
  void *extra = nullptr;
  FunctionBounds b;
  if (dladdr1(reinterpret_cast<void *>(fn), &info, &extra, RTLD_DL_SYMENT) &&
      extra && static_cast<const ElfW(Sym) *>(extra)->st_size) {
    const auto *sym = static_cast<const ElfW(Sym) *>(extra);
    b.start = addr(fn);
    b.size = sym->st_size;
  }
  return b;
}

template <class F> HookOptions bounded(F *fn) {
  HookOptions o;
  o.function = bounds_of(fn);
  return o;
}

inline std::vector<uint8_t> bytes_at(uint64_t address, size_t n) {
  std::vector<uint8_t> v(n);
  memcpy(v.data(), reinterpret_cast<const void *>(address), n);
  return v;
}

// Calls through a volatile pointer so the compiler cannot inline or fold.
template <class R, class... A> R call(R (*fn)(A...), A... args) {
  R (*volatile p)(A...) = fn;
  return p(args...);
}

} // namespace ubtrace::runtime::hook::testing
