// --info: the system, this build, which backends can run here (the agent,
// the CUDA driver, devices and toolkit), features, and every config
// variable with its default and any environment override.
#pragma once

#include <ostream>

namespace ubtrace::cli {

void print_info(std::ostream &out);

} // namespace ubtrace::cli
