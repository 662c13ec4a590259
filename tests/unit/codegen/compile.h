// Compiles a script to a bundle for the codegen tests.
#pragma once

#include <string>
#include <vector>

#include "codegen/codegen.h"

namespace ubtrace::test {

// The bundle of `script`, or an empty optional and the diagnostics in `err`.
bool compile(const std::string &script, codegen::Output &out, std::string &err,
             const std::vector<std::string> &positional = {},
             bool unsafe = false);

} // namespace ubtrace::test
