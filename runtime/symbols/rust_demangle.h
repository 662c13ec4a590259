// Rust symbol names: the v0 scheme (`_R...`, RFC 2603) and the legacy one
// (`_ZN...17h<16 hex digits>E`), printed as rustc's demangler prints them
// in its alternate form: paths without crate disambiguators or hashes
// (`hello_rust::fun1`, `<alloc::vec::Vec<u8> as core::ops::Drop>::drop`).
// Anything not understood is left to the caller (nullopt).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ubtrace::runtime::symbols {

std::optional<std::string> demangle_rust(std::string_view name);

} // namespace ubtrace::runtime::symbols
