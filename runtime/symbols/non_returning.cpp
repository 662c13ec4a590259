#include "runtime/symbols/non_returning.h"

#include <array>

namespace ubtrace::runtime::symbols {
namespace {

constexpr std::string_view kNoReturnAddress =
    "is entered without a return address (a jump, not a call)";
constexpr std::string_view kNeverReturns = "never returns";

struct Entry {
  std::string_view name;
  std::string_view reason;
};

constexpr std::array kEntries = {
    // Entered by a jump.
    Entry{"_start", kEntryPointReason},
    Entry{"_dl_start_user", kNoReturnAddress},
    Entry{"__restore_rt", kNoReturnAddress},
    Entry{"_dl_runtime_resolve", kNoReturnAddress},
    Entry{"_dl_runtime_resolve_fxsave", kNoReturnAddress},
    Entry{"_dl_runtime_resolve_xsave", kNoReturnAddress},
    Entry{"_dl_runtime_resolve_xsavec", kNoReturnAddress},
    Entry{"_dl_runtime_profile", kNoReturnAddress},
    Entry{"_dl_runtime_profile_avx", kNoReturnAddress},
    Entry{"_dl_runtime_profile_avx512", kNoReturnAddress},
    Entry{"_dl_runtime_profile_sse", kNoReturnAddress},
    Entry{"__start_context", kNoReturnAddress},
    // Never return.
    Entry{"exit", kNeverReturns}, Entry{"_exit", kNeverReturns},
    Entry{"_Exit", kNeverReturns}, Entry{"quick_exit", kNeverReturns},
    Entry{"abort", kNeverReturns}, Entry{"__libc_start_main", kNeverReturns},
    Entry{"__libc_start_call_main", kNeverReturns},
    Entry{"pthread_exit", kNeverReturns},
    Entry{"__pthread_exit", kNeverReturns},
    Entry{"__pthread_unwind", kNeverReturns},
    Entry{"__pthread_unwind_next", kNeverReturns},
    Entry{"thrd_exit", kNeverReturns}, Entry{"__stack_chk_fail", kNeverReturns},
    Entry{"__stack_chk_fail_local", kNeverReturns},
    Entry{"__assert_fail", kNeverReturns},
    Entry{"__assert_perror_fail", kNeverReturns},
    Entry{"__fortify_fail", kNeverReturns}, Entry{"__chk_fail", kNeverReturns},
    Entry{"__libc_fatal", kNeverReturns},
    Entry{"__libc_message", kNeverReturns}, Entry{"err", kNeverReturns},
    Entry{"errx", kNeverReturns}, Entry{"verr", kNeverReturns},
    Entry{"verrx", kNeverReturns}, Entry{"longjmp", kNeverReturns},
    Entry{"_longjmp", kNeverReturns}, Entry{"siglongjmp", kNeverReturns},
    Entry{"__longjmp", kNeverReturns}, Entry{"__longjmp_chk", kNeverReturns},
    Entry{"__libc_longjmp", kNeverReturns},
    Entry{"__libc_siglongjmp", kNeverReturns},
    Entry{"__cxa_throw", kNeverReturns}, Entry{"__cxa_rethrow", kNeverReturns},
    Entry{"__cxa_bad_cast", kNeverReturns},
    Entry{"__cxa_bad_typeid", kNeverReturns},
    Entry{"__cxa_throw_bad_array_new_length", kNeverReturns},
    Entry{"__cxa_call_terminate", kNeverReturns},
    Entry{"__cxa_call_unexpected", kNeverReturns},
    Entry{"__cxa_pure_virtual", kNeverReturns},
    Entry{"__cxa_deleted_virtual", kNeverReturns},
    Entry{"_Unwind_Resume", kNeverReturns},
    Entry{"_ZSt9terminatev", kNeverReturns},   // std::terminate()
    Entry{"_ZSt10unexpectedv", kNeverReturns}, // std::unexpected()
};

} // namespace

std::string_view non_returning_reason(std::string_view name) {
  name = name.substr(0, name.find('@'));
  for (const Entry &e : kEntries)
    if (e.name == name)
      return e.reason;
  // libstdc++'s std::__throw_bad_alloc() and the other std::__throw_*
  // helpers: _ZSt<len>__throw_<what>...
  if (name.rfind("_ZSt", 0) == 0 &&
      name.find("__throw_") != std::string_view::npos)
    return kNeverReturns;
  return {};
}

} // namespace ubtrace::runtime::symbols
