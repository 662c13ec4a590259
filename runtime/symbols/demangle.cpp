#include "runtime/symbols/demangle.h"

#include "runtime/symbols/rust_demangle.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace ubtrace::runtime::symbols {

bool looks_mangled(std::string_view name) {
  return name.starts_with("_Z") || name.starts_with("____Z");
}

std::optional<std::string> demangle(std::string_view name) {
  if (!looks_mangled(name))
    return std::nullopt;
  std::string_view version;
  if (auto at = name.find('@'); at != std::string_view::npos) {
    version = name.substr(at);
    name = name.substr(0, at);
  }
  std::string mangled(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
      &std::free);
  if (status != 0 || !out)
    return std::nullopt;
  return std::string(out.get()) + std::string(version);
}

std::string strip_parameters(std::string demangled) {
  // Walk back from the last ')' to the '(' that opens the parameter list;
  // parentheses inside it (function pointer parameters) nest.
  auto close = demangled.find_last_of(')');
  if (close == std::string::npos)
    return demangled;
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (demangled[i] == ')')
      ++depth;
    else if (demangled[i] == '(')
      --depth;
    if (depth == 0) {
      demangled.resize(i);
      return demangled;
    }
  }
  return demangled;
}

std::string demangle_or_self(std::string_view name) {
  // Rust first: its legacy names are valid Itanium names too, which the
  // C++ demangler would print with their hash.
  if (auto r = demangle_rust(name))
    return std::move(*r);
  if (auto d = demangle(name))
    return std::move(*d);
  return std::string(name);
}

} // namespace ubtrace::runtime::symbols
