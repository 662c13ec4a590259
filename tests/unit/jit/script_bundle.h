// One-liners through the real front end (parser, semantic passes, codegen),
// as the CLI runs them: for tests and the benchmark that want real codegen
// output with its map specifications.
#pragma once

#include "runtime/bundle.h"
#include "runtime/result.h"
#include "runtime/vm/helpers.h"

#include <string>

namespace ubtrace::jit::test {

Result<runtime::Bundle> compile_script(const std::string &program);

// The helpers host programs may call, as backends/program_set.cpp lists
// them: the kernel's table plus map_lookup_percpu_elem.
const vm::HelperTable &host_helper_protos();

} // namespace ubtrace::jit::test
