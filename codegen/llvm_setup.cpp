#include "codegen/llvm_setup.h"

#include <cstdio>
#include <cstring>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <mutex>
#include <unistd.h>

namespace ubtrace::codegen {
namespace {

// What is being compiled, for the fatal error message. Fixed storage: the
// handler may run out of memory.
char g_scope[256] = "";

void set_option(const char *name, const char *value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end() || it->second->addOccurrence(0, name, value))
    std::fprintf(stderr, "WARNING: LLVM has no option -%s=%s\n", name, value);
}

void write_all(const char *s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0)
      return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// LLVM is in an unknown state: print, and leave without running static
// destructors or atexit handlers that might use it.
[[noreturn]] void fail(const char *what, const char *reason) {
  std::fflush(stdout);
  std::fflush(stderr);
  write_all("ERROR: ");
  if (g_scope[0]) {
    write_all(g_scope);
    write_all(": ");
  }
  write_all(what);
  write_all(reason);
  write_all("\n");
  ::_exit(1);
}

void on_fatal_error(void *, const char *reason, bool) {
  fail("the LLVM code generator failed: ", reason);
}

void on_bad_alloc(void *, const char *reason, bool) {
  fail("out of memory in LLVM: ", reason);
}

} // namespace

void configure_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(on_fatal_error, nullptr);
    llvm::install_bad_alloc_error_handler(on_bad_alloc, nullptr);
    set_option("pre-RA-sched", "source");
    set_option("disable-machine-cse", "true");
    for (const char *feature :
         {"disable-ldsx", "disable-movsx", "disable-bswap", "disable-sdiv-smod",
          "disable-storeimm"})
      set_option(feature, "true");
  });
}

CompileScope::CompileScope(std::string what) : previous_(g_scope) {
  std::snprintf(g_scope, sizeof g_scope, "%s", what.c_str());
}

CompileScope::~CompileScope() {
  std::snprintf(g_scope, sizeof g_scope, "%s", previous_.c_str());
}

} // namespace ubtrace::codegen
