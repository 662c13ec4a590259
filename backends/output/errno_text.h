// strerror() and signal_name() as bpftrace prints them (see errno_text.cpp
// for where the texts come from).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ubtrace::output {

std::string_view errno_text(int64_t code);
std::string signal_text(int64_t sig);

} // namespace ubtrace::output
