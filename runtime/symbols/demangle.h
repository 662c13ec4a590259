// C++ names: the Itanium ABI demangler (abi::__cxa_demangle) and the
// shapes of a demangled name bpftrace matches against.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ubtrace::runtime::symbols {

// Whether a symbol name is a mangled C++ name bpftrace would demangle:
// "_Z..." or a clang block's "____Z...".
bool looks_mangled(std::string_view name);

// The demangled name with its parameter list ("ns::Foo::bar(int) const"),
// or nullopt when `name` is not a valid mangled name. A symbol version
// suffix ("@@GLIBCXX_3.4") is kept out of the demangler and appended back.
std::optional<std::string> demangle(std::string_view name);

// The demangled name without its parameter list and what follows it
// ("ns::Foo::bar(int) const" -> "ns::Foo::bar"), as bpftrace matches
// `uprobe:BIN:cpp:ns::Foo::bar`. A return type in front of a template
// ("int ns::twice<int>(int)") stays: bpftrace keeps it too.
std::string strip_parameters(std::string demangled);

// Rust's demangling (rust_demangle.h) or demangle(name) when one succeeds,
// else `name` itself.
std::string demangle_or_self(std::string_view name);

} // namespace ubtrace::runtime::symbols
