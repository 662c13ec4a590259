// A script through the real front end (parser, semantic passes, codegen),
// as the CLI compiles it, into the bundle run_session takes.
#pragma once

#include "runtime/bundle.h"
#include "runtime/result.h"

#include <string>

namespace ubtrace::session_test {

Result<runtime::Bundle> compile_script(const std::string &program);

} // namespace ubtrace::session_test
