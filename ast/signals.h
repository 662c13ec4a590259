// Signal names the language accepts (signal("SIGUSR1"), signal("KILL")) and
// the numbers a signal may have. Shared by semantic analysis, which refuses
// unknown names and out-of-range numbers with a located error, and code
// generation, which turns a name into its number.
#pragma once

#include <string_view>

namespace ubtrace::ast {

// Signal numbers a process can be sent: 1..64 (Linux's _NSIG - 1).
inline constexpr int kMinSignal = 1;
inline constexpr int kMaxSignal = 64;

// The number of a signal name, with or without "SIG" ("SIGTERM", "TERM");
// -1 for a name that is not a signal.
int signal_number(std::string_view name);

} // namespace ubtrace::ast
