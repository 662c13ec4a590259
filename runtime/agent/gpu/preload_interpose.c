/* Linked into libubtrace_preload.so, the object LD_PRELOAD names: symbols
 * defined here come before libc's and the CUDA runtime's in lookup, which
 * is what interposing needs (the agent library itself is a dependency of
 * the preload library and comes after libc).
 *
 * dlsym: every result for a name starting "cu" goes through the agent
 * (runtime/agent/gpu/interpose.cpp), which hands out wrappers for the CUDA
 * driver's code-loading, launch and teardown entry points. Known
 * difference: dlsym(RTLD_NEXT, "cu...") resolves after this library rather
 * than after the caller (other names reach the real dlsym by a tail call,
 * with the caller's return address).
 * __cudaRegisterFatBinary: programs with the shared CUDA runtime register
 * their fatbins through it; the agent is told, then the runtime's runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

extern void *ubtrace_gpu_dlsym_result(const char *name, void *result);
extern void ubtrace_gpu_fatbin_registered(const void *wrapper);

typedef void *(*ubt_dlsym_fn)(void *, const char *);

static ubt_dlsym_fn ubt_real_dlsym(void) {
  static ubt_dlsym_fn fn;
  if (!fn) {
    fn = (ubt_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!fn)
      fn = (ubt_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  }
  return fn;
}

static __attribute__((noinline)) void *
ubt_cuda_dlsym(ubt_dlsym_fn real, void *handle, const char *name) {
  void *result = real(handle, name);
  return result ? ubtrace_gpu_dlsym_result(name, result) : NULL;
}

/* Every other name goes to the real dlsym by a tail call, so it sees the
 * application's return address as its caller: dlsym(RTLD_NEXT, "malloc")
 * in a library that wraps malloc must find the definition after that
 * library, not after this one (which can be the wrapper itself). */
__attribute__((visibility("default"))) void *dlsym(void *handle,
                                                   const char *name) {
  ubt_dlsym_fn real = ubt_real_dlsym();
  if (!real)
    return NULL;
  if (name[0] == 'c' && name[1] == 'u')
    return ubt_cuda_dlsym(real, handle, name);
  __attribute__((musttail)) return real(handle, name);
}

typedef void **(*ubt_register_fn)(void *);
void **__cudaRegisterFatBinary(void *wrapper);

/* The CUDA runtime's __cudaRegisterFatBinary as the calling object would
 * have bound it: searched in the caller's own scope (the object and its
 * dependencies). A library dlopen()ed with its own copy of the runtime
 * (RTLD_LOCAL, as Python extensions load CUDA) has it outside the global
 * scope, where RTLD_NEXT looks: without this the registration got NULL and
 * the runtime crashed at exit. */
static ubt_register_fn ubt_real_register(void *caller) {
  ubt_dlsym_fn lookup = ubt_real_dlsym();
  if (!lookup)
    return NULL;
  Dl_info info;
  if (dladdr(caller, &info) && info.dli_fname && info.dli_fname[0]) {
    void *object = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (object) {
      ubt_register_fn fn =
          (ubt_register_fn)lookup(object, "__cudaRegisterFatBinary");
      dlclose(object);
      if (fn && fn != (ubt_register_fn)__cudaRegisterFatBinary)
        return fn;
    }
  }
  static ubt_register_fn global;
  if (!global)
    global = (ubt_register_fn)lookup(RTLD_NEXT, "__cudaRegisterFatBinary");
  return global;
}

__attribute__((visibility("default"))) void **
__cudaRegisterFatBinary(void *wrapper) {
  ubt_register_fn real = ubt_real_register(__builtin_return_address(0));
  ubtrace_gpu_fatbin_registered(wrapper);
  return real ? real(wrapper) : NULL;
}
