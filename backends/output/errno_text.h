// strerror() as bpftrace prints it (see errno_text.cpp for where the texts
// come from).
#pragma once

#include <cstdint>
#include <string_view>

namespace ubtrace::output {

std::string_view errno_text(int64_t code);

} // namespace ubtrace::output
