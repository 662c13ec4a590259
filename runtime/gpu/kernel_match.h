// Which kernels a probe's NAME selects. `kernel:BIN:NAME` takes the mangled
// name or the demangled one, with `*` wildcards (bpftrace's only wildcard):
// "vector_add", "_Z10vector_add*", "ubt_samples::scale_kernel<float>",
// "*scale_kernel*", "void ubt_samples::scale_kernel<float>(float*, float,
// int)".
#pragma once

#include <string>
#include <string_view>

namespace ubtrace::runtime::gpu {

struct KernelNames {
  std::string mangled;   // as in the PTX: "_ZN11ubt_samples7collatzEPii"
  std::string signature; // demangled: "ubt_samples::collatz(int*, int)"
  std::string qualified; // without return type and parameters:
                         // "ubt_samples::collatz"
};

// Demangles with the Itanium ABI demangler; a name that is not mangled
// (an extern "C" kernel) is its own signature and qualified name.
KernelNames kernel_names(std::string_view mangled);

// `*` matches any run of characters, every other character itself.
bool glob_match(std::string_view pattern, std::string_view text);

// True if `pattern` matches the mangled name, the signature or the
// qualified name.
bool kernel_matches(std::string_view pattern, const KernelNames &names);

} // namespace ubtrace::runtime::gpu
