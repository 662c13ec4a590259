// The ubtrace CLI: reads a script, runs the front end (parse, passes), and
// hands the compiled bundle to the backends.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "ast/context.h"
#include "ast/pass_manager.h"
#include "ast/printer.h"
#include "backends/options.h"
#include "backends/session.h"
#include "codegen/codegen.h"
#include "parser/driver.h"
#include "runtime/symbols/probe_resolver.h"

namespace {

using namespace ubtrace;

bool wants(const cli::Options &o, const char *stage) {
  for (const auto &s : o.debug_stages)
    if (s == stage || s == "all")
      return true;
  return false;
}

// ubtrace -l [PATTERN]: the user-space probes a pattern matches, one per
// line, as bpftrace lists them.
int list_probes(const cli::Options &opts) {
  std::string pattern = opts.list_pattern;
  if (pattern.empty()) {
    std::cerr << "ERROR: -l needs a pattern, e.g. -l 'uprobe:/bin/bash:read*' or "
                 "-l 'usdt:./app:*'"
              << std::endl;
    return 1;
  }
  if (pattern.rfind("kprobe", 0) == 0 || pattern.rfind("tracepoint", 0) == 0 ||
      pattern.rfind("kfunc", 0) == 0 || pattern.rfind("fentry", 0) == 0) {
    std::cerr << "ERROR: ubtrace lists uprobe, uretprobe and usdt probes; kernel "
                 "probes are not run by ubtrace"
              << std::endl;
    return 1;
  }
  runtime::symbols::ProbeResolver resolver;
  std::optional<pid_t> pid;
  if (opts.pid)
    pid = opts.pid;
  auto lines = resolver.list(pattern, pid);
  if (!lines) {
    std::cerr << "ERROR: " << lines.error() << std::endl;
    return 1;
  }
  for (const auto &l : *lines)
    std::cout << l << "\n";
  return 0;
}

int run(const cli::Options &opts) {
  if (opts.list && opts.program.empty())
    return list_probes(opts);
  ast::ASTContext ctx(opts.program_name, opts.program);
  ctx.positional = opts.positional;
  ctx.unsafe = opts.unsafe;

  bool ok = parser::parse(ctx);
  if (ok && wants(opts, "ast"))
    ast::print_ast(std::cout, *ctx.root, false);
  if (ok)
    ok = ast::run_passes(ctx, ast::semantic_passes());
  ctx.diags().emit(std::cerr, !opts.no_warnings);
  if (!ok)
    return 1;
  ctx.diags() = ast::Diagnostics();
  if (wants(opts, "types"))
    ast::print_ast(std::cout, *ctx.root, true);

  codegen::Options cg;
  cg.want_ir = wants(opts, "ir");
  cg.want_disasm = wants(opts, "bpf");
  auto out = codegen::generate(ctx, cg);
  ctx.diags().emit(std::cerr, false);
  if (!out) {
    if (ctx.diags().ok())
      std::cerr << "ERROR: " << out.error() << std::endl;
    return 1;
  }
  if (cg.want_ir)
    std::cout << out->ir;
  if (cg.want_disasm)
    std::cout << out->disasm;
  if (!opts.emit_elf.empty()) {
    std::ofstream f(opts.emit_elf, std::ios::binary);
    f.write(reinterpret_cast<const char *>(out->bundle.object.data()),
            static_cast<std::streamsize>(out->bundle.object.size()));
    if (!f) {
      std::cerr << "ERROR: cannot write " << opts.emit_elf << std::endl;
      return 1;
    }
  }
  if (opts.dry_run)
    return 0;

  std::ofstream file;
  backends::SessionOptions so;
  so.output_format = opts.output_format;
  so.out = &std::cout;
  so.err = &std::cerr;
  if (!opts.output_file.empty()) {
    file.open(opts.output_file, std::ios::trunc);
    if (!file) {
      std::cerr << "ERROR: cannot open " << opts.output_file << std::endl;
      return 1;
    }
    so.out = &file;
  }
  so.quiet = opts.quiet;
  so.unsafe = opts.unsafe;
  so.command = opts.command;
  so.pid = opts.pid;
  struct sigaction sa {};
  sa.sa_handler = [](int) { backends::g_stop_requested.store(true); };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return backends::run_session(out->bundle, so);
}

} // namespace

int main(int argc, char **argv) {
  std::string error;
  auto opts = cli::parse_options(argc, argv, error);
  if (!opts) {
    std::cerr << "ERROR: " << error << "\n\n" << cli::usage_text();
    return 1;
  }
  if (opts->help) {
    std::cout << cli::usage_text();
    return 0;
  }
  if (opts->version) {
    std::cout << "ubtrace v" UBTRACE_VERSION << std::endl;
    return 0;
  }
  return run(*opts);
}
