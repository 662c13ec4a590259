// Library names as users write them in attach points (`uprobe:libc:malloc`,
// `kernel:libtorch_cuda.so:*`): which files they stand for. Plain string
// logic, no I/O, so the in-process agent can match a module's file by the
// name a GPU probe gave.
#pragma once

#include <cctype>
#include <string_view>

namespace ubtrace::runtime::symbols {

inline std::string_view basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Whether a library file or soname `candidate` ("libc.so.6",
// "libc-2.31.so", or a path ending in one) is what the user meant by `name`
// ("libc", "libc.so.6").
inline bool library_name_matches(std::string_view name,
                                 std::string_view candidate) {
  candidate = basename_of(candidate);
  if (candidate == name)
    return true;
  if (name.find(".so") != std::string_view::npos) {
    // "libssl.so" also takes "libssl.so.3", never "libssl.so3".
    return candidate.starts_with(name) && candidate.size() > name.size() &&
           candidate[name.size()] == '.';
  }
  if (!candidate.starts_with(name))
    return false;
  std::string_view rest = candidate.substr(name.size());
  // "libc" takes "libc.so.6" and "libc-2.31.so", not "libcrypt.so.1".
  if (rest.starts_with(".so"))
    return rest.size() == 3 || rest[3] == '.';
  return rest.size() > 1 && rest[0] == '-' &&
         std::isdigit(static_cast<unsigned char>(rest[1])) &&
         rest.find(".so") != std::string_view::npos;
}

// Whether BIN reads as a library name rather than a program or path.
inline bool looks_like_library(std::string_view bin) {
  if (bin.find('/') != std::string_view::npos)
    return false;
  return bin.starts_with("lib") || bin.find(".so") != std::string_view::npos;
}

} // namespace ubtrace::runtime::symbols
