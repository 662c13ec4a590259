// Error messages for failed system calls: "what: strerror(errno)".
#pragma once

#include "runtime/result.h"

#include <cstring>
#include <string>

namespace ubtrace::runtime::inject {

inline Error sys_error(const std::string &what, int err) {
  return make_error(what + ": " + std::strerror(err));
}

} // namespace ubtrace::runtime::inject
