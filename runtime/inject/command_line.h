// Splitting `ubtrace -c 'CMD ARGS'` into words the way a POSIX shell splits
// a simple command, without running a shell: the program is started
// directly (as bpftrace does), so the traced process is the program itself.
//
// Supported: blanks between words; 'single quotes' (literal); "double
// quotes" (backslash escapes \\ \" \$ \` and newline); backslash escapes
// outside quotes; backslash-newline continuations; leading NAME=value
// assignments, which go to the program's environment.
//
// Rejected with a message that says where: unterminated quotes, shell
// operators (| & ; < > ( )), and expansions ($NAME, ${...}, $(...),
// `...`) outside single quotes, because running the command without them
// would silently differ from what a shell does. Globs (* ? [) and ~ stay
// literal, as they do in a shell when nothing matches.
#pragma once

#include "runtime/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::inject {

struct CommandLine {
  std::vector<std::string> env;  // "NAME=value", in order
  std::vector<std::string> argv; // argv[0] is the program as written
};

Result<CommandLine> split_command(std::string_view text);

} // namespace ubtrace::runtime::inject
