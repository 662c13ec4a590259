#include "ast/signals.h"

#include <csignal>
#include <string>
#include <utility>

namespace ubtrace::ast {

int signal_number(std::string_view name) {
  static const std::pair<const char *, int> table[] = {
      {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},       {"SIGQUIT", SIGQUIT},
      {"SIGILL", SIGILL},   {"SIGTRAP", SIGTRAP},     {"SIGABRT", SIGABRT},
      {"SIGIOT", SIGIOT},   {"SIGBUS", SIGBUS},       {"SIGFPE", SIGFPE},
      {"SIGKILL", SIGKILL}, {"SIGUSR1", SIGUSR1},     {"SIGSEGV", SIGSEGV},
      {"SIGUSR2", SIGUSR2}, {"SIGPIPE", SIGPIPE},     {"SIGALRM", SIGALRM},
      {"SIGTERM", SIGTERM}, {"SIGSTKFLT", SIGSTKFLT}, {"SIGCHLD", SIGCHLD},
      {"SIGCONT", SIGCONT}, {"SIGSTOP", SIGSTOP},     {"SIGTSTP", SIGTSTP},
      {"SIGTTIN", SIGTTIN}, {"SIGTTOU", SIGTTOU},     {"SIGURG", SIGURG},
      {"SIGXCPU", SIGXCPU}, {"SIGXFSZ", SIGXFSZ},     {"SIGVTALRM", SIGVTALRM},
      {"SIGPROF", SIGPROF}, {"SIGWINCH", SIGWINCH},   {"SIGIO", SIGIO},
      {"SIGPOLL", SIGPOLL}, {"SIGPWR", SIGPWR},       {"SIGSYS", SIGSYS}};
  std::string n(name);
  if (n.rfind("SIG", 0) != 0)
    n = "SIG" + n;
  for (const auto &[s, v] : table)
    if (n == s)
      return v;
  return -1;
}

} // namespace ubtrace::ast
