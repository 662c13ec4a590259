#include "runtime/gpu/kernel_match.h"

#include <cstdlib>
#include <cxxabi.h>

namespace ubtrace::runtime::gpu {
namespace {

// The signature less its trailing parameter list and any leading return
// type (function templates demangle with one: "void ns::f<int>(int)").
std::string qualified_name(std::string_view signature) {
  std::string_view s = signature;
  // Drop cv/ref qualifiers after the parameter list, then the list itself.
  if (!s.empty() && s.back() != ')') {
    size_t close = s.rfind(')');
    if (close != std::string_view::npos)
      s = s.substr(0, close + 1);
  }
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      else if (s[i] == '(' && --depth == 0) {
        s = s.substr(0, i);
        break;
      }
    }
  }
  // A space outside template arguments separates the return type.
  int angle = 0;
  size_t cut = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<')
      ++angle;
    else if (s[i] == '>')
      --angle;
    else if (s[i] == ' ' && angle == 0)
      cut = i;
  }
  if (cut != std::string_view::npos &&
      s.substr(cut + 1).rfind("operator", 0) != 0)
    s = s.substr(cut + 1);
  return std::string(s);
}

} // namespace

KernelNames kernel_names(std::string_view mangled) {
  KernelNames names;
  names.mangled = std::string(mangled);
  int status = 0;
  char *demangled = nullptr;
  if (mangled.rfind("_Z", 0) == 0)
    demangled =
        abi::__cxa_demangle(names.mangled.c_str(), nullptr, nullptr, &status);
  if (demangled == nullptr || status != 0) {
    std::free(demangled);
    names.signature = names.mangled;
    names.qualified = names.mangled;
    return names;
  }
  names.signature = demangled;
  std::free(demangled);
  names.qualified = qualified_name(names.signature);
  return names;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with backtracking to the last star: linear in
  // practice, no recursion.
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

bool kernel_matches(std::string_view pattern, const KernelNames &names) {
  return glob_match(pattern, names.mangled) ||
         glob_match(pattern, names.signature) ||
         glob_match(pattern, names.qualified);
}

} // namespace ubtrace::runtime::gpu
