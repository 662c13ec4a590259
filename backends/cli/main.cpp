// The ubtrace CLI: reads a script, runs the front end (parse, passes), and
// hands the compiled bundle to the backends.
#include "ast/context.h"
#include "ast/pass_manager.h"
#include "ast/printer.h"
#include "backends/cli/c_headers.h"
#include "backends/cli/debug_types.h"
#include "backends/cli/env_config.h"
#include "backends/cli/info.h"
#include "backends/cli/listing.h"
#include "backends/cli/options.h"
#include "backends/output/formats.h"
#include "backends/output/line_sink.h"
#include "backends/reporter.h"
#include "backends/session.h"
#include "backends/userspace/target.h"
#include "codegen/codegen.h"
#include "parser/driver.h"
#include "runtime/result.h"
#include "runtime/symbols/debug_file.h"
#include "runtime/symbols/non_returning.h"

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace {

using namespace ubtrace;

bool wants(const cli::Options &o, const char *stage) {
  for (const auto &s : o.debug_stages)
    if (s == stage || s == "all")
      return true;
  return false;
}

// ---------------------------------------------------------------------------

// -B: how results are buffered. Neither stream has a line mode: flushing
// after every write is the closest (each event is written at once).
void set_buffering(const std::string &mode, std::ostream &out) {
  if (mode.empty())
    return;
  if (mode == "full")
    out.unsetf(std::ios::unitbuf);
  else
    out.setf(std::ios::unitbuf);
}

// The semantic passes with the environment applied right after the config
// pass, before anything reads the settings (types use max_strlen and
// stack_mode).
bool run_front_end_passes(ast::ASTContext &ctx, backends::Reporter &report) {
  const auto &all = ast::semantic_passes();
  std::vector<ast::Pass> config, rest;
  for (const auto &p : all)
    (p.name == "config" ? config : rest).push_back(p);
  if (!ast::run_passes(ctx, config))
    return false;
  if (auto env = cli::apply_environment(ctx.config); !env) {
    report.error(env.error());
    return false;
  }
  return ast::run_passes(ctx, rest);
}

// A uretprobe named explicitly on a function that never returns or has no
// return address (non_returning.h) is refused here, at its place in the
// script; wildcards, and the ELF entry point whatever its name, are the
// probe resolver's when the binary is read.
bool check_return_probes(ast::ASTContext &ctx) {
  bool ok = true;
  for (auto *probe : ctx.root->probes)
    for (auto *ap : probe->attach_points) {
      if (ap->kind != ast::ProbeKind::Uretprobe || ap->wildcard ||
          ap->has_address)
        continue;
      std::string_view why = runtime::symbols::non_returning_reason(ap->func);
      if (why.empty())
        continue;
      ctx.diags().error(ap->loc)
          << "cannot attach a uretprobe to " << ap->func << ": it " << why
          << ", so a return probe there would corrupt the program";
      ok = false;
    }
  return ok;
}

// -l with a program (-e, or a script file named as the pattern): what each
// of its attach points matches; begin/end list as themselves.
int list_program(const cli::Options &opts, backends::Reporter &report) {
  std::string program = opts.program, name = opts.program_name;
  if (program.empty()) {
    std::error_code ec;
    const std::string &pattern = opts.list_pattern;
    bool is_file =
        !pattern.empty() && std::filesystem::is_regular_file(pattern, ec);
    // A name with a '.' and no ':' or '*' was meant as a script (bpftrace's
    // rule): say so; as a search pattern it names no probe type ubtrace
    // lists, so nothing matches.
    if (!is_file && pattern.find('.') != std::string::npos &&
        pattern.find_first_of(":*") == std::string::npos) {
      report.warning("It appears that '" + pattern +
                     "' is a filename but the file does not exist. Treating '" +
                     pattern + "' as a search pattern.");
      return 0;
    }
    if (!is_file)
      return cli::list_probes(pattern, opts.first_pid(), report,
                              opts.verbose > 0);
    std::ifstream in(opts.list_pattern, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    program = text.str();
    name = opts.list_pattern;
  }
  ast::ASTContext ctx(name, program);
  ctx.positional = opts.positional;
  ctx.named_args = opts.named_args;
  cli::DwarfDebugTypes debug_types(opts.first_pid());
  ctx.debug_types = &debug_types;
  cli::SystemHeaders headers(opts.include_dirs, opts.include_files);
  ctx.c_headers = &headers;
  bool ok = parser::parse(ctx) &&
            ast::run_passes(ctx, ast::semantic_passes(), "attach-points");
  ctx.diags().emit(std::cerr, !opts.no_warnings);
  if (!ok)
    return 1;
  for (auto *probe : ctx.root->probes)
    for (auto *ap : probe->attach_points) {
      switch (*ap->kind) {
      case ast::ProbeKind::Begin:
      case ast::ProbeKind::End:
        std::cout << ap->provider() << "\n";
        continue;
      case ast::ProbeKind::Interval:
      case ast::ProbeKind::Profile:
        std::cout << ap->provider() << ":" << ap->unit << ":\n";
        continue;
      default:
        break;
      }
      if (int rc = cli::list_probes(ap->name(), opts.first_pid(), report,
                                    opts.verbose > 0))
        return rc;
    }
  return 0;
}

// --probe-filter REGEX: only the attach points whose names the regex finds
// (begin and end always stay); a probe left with none goes.
bool apply_probe_filter(ast::ASTContext &ctx, const std::string &filter,
                        backends::Reporter &report) {
  std::regex re;
  try {
    re = std::regex(filter, std::regex::extended);
  } catch (const std::regex_error &e) {
    report.error("Invalid --probe-filter regex '" + filter + "': " + e.what());
    return false;
  }
  auto &probes = ctx.root->probes;
  for (auto *probe : probes)
    std::erase_if(probe->attach_points, [&](ast::AttachPoint *ap) {
      return ap->kind != ast::ProbeKind::Begin &&
             ap->kind != ast::ProbeKind::End &&
             !std::regex_search(ap->name(), re);
    });
  std::erase_if(probes, [](ast::Probe *p) { return p->attach_points.empty(); });
  if (probes.empty()) {
    report.error("No probes to attach: none matches --probe-filter '" + filter +
                 "'");
    return false;
  }
  return true;
}

int run(const cli::Options &opts, backends::Reporter &report) {
  if (opts.list)
    return list_program(opts, report);
  ast::ASTContext ctx(opts.program_name, opts.program);
  ctx.positional = opts.positional;
  ctx.named_args = opts.named_args;
  ctx.unsafe = opts.unsafe;
  cli::DwarfDebugTypes debug_types(opts.first_pid());
  ctx.debug_types = &debug_types;
  cli::SystemHeaders headers(opts.include_dirs, opts.include_files);
  ctx.c_headers = &headers;

  bool ok = parser::parse(ctx);
  // An empty program (or one of comments, definitions and config alone)
  // has nothing to attach: an error, as in bpftrace, not a silent exit 0.
  if (ok && ctx.root->probes.empty()) {
    ctx.diags().emit(std::cerr, !opts.no_warnings);
    report.error("No probes to attach: " + opts.program_name +
                 (opts.program.find_first_not_of(" \t\r\n") == std::string::npos
                      ? " is empty"
                      : " defines no probe"));
    return 1;
  }
  if (ok && wants(opts, "ast"))
    ast::print_ast(std::cout, *ctx.root, false);
  if (ok)
    ok = run_front_end_passes(ctx, report) && check_return_probes(ctx);
  ctx.diags().emit(std::cerr, !opts.no_warnings);
  if (!ok)
    return 1;
  if (!opts.probe_filter.empty() &&
      !apply_probe_filter(ctx, opts.probe_filter, report))
    return 1;
  ctx.diags() = ast::Diagnostics();
  if (wants(opts, "types"))
    ast::print_ast(std::cout, *ctx.root, true);

  codegen::Options cg;
  cg.want_ir = wants(opts, "ir");
  cg.want_disasm = wants(opts, "bpf");
  cg.helper_errors = opts.helper_errors;
  auto out = codegen::generate(ctx, cg);
  ctx.diags().emit(std::cerr, false);
  if (!out) {
    if (ctx.diags().ok())
      report.error(out.error());
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
      report.error("cannot write " + opts.emit_elf);
      return 1;
    }
  }
  if (opts.dry_run)
    return 0;
  // bpftrace's words: its dw_ustack reads the targets' unwind data at
  // start-up. (Here every user-space probe needs the process anyway.)
  if (ctx.dw_ustack && opts.pids.empty() && opts.command.empty()) {
    report.error("dw_ustack requires a target process. Use -p or -c to "
                 "specify one.");
    return 1;
  }

  std::ofstream file;
  // Results on standard output never split a line (line_sink.h): the
  // traced program writes to the same place.
  std::cout.flush();
  output::LineSink stdout_sink(STDOUT_FILENO);
  std::ostream stdout_lines(&stdout_sink);
  backends::SessionOptions so;
  so.output_format = opts.output_format;
  so.out = &stdout_lines;
  so.err = &std::cerr;
  const output::OutputFormat *format =
      output::find_output_format(opts.output_format);
  if (!opts.output_file.empty() && format && format->whole_file) {
    // The format's Output rewrites the file whole at each print.
    so.whole_file = opts.output_file;
  } else if (!opts.output_file.empty()) {
    file.open(opts.output_file, std::ios::trunc);
    if (!file) {
      report.error("cannot open " + opts.output_file + ": " +
                   std::strerror(errno));
      return 1;
    }
    so.out = &file;
  }
  set_buffering(opts.buffering, *so.out);
  so.quiet = opts.quiet;
  so.metrics_listen = opts.metrics_listen;
  so.verbose = opts.verbose;
  so.unsafe = opts.unsafe;
  so.bench = opts.bench;
  so.test = opts.test;
  so.no_warnings = opts.no_warnings;
  so.command = opts.command;
  so.pids = opts.pids;
  so.follow = opts.follow;
  struct sigaction sa{};
  sa.sa_handler = [](int) { backends::g_stop_requested.store(true); };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return backends::run_session(out->bundle, so);
}

} // namespace

int main(int argc, char **argv) {
  // SIGUSR1 runs the self:signal:SIGUSR1 probes, and is ignored without
  // them, as in bpftrace (it no longer ends or prints the trace). Caught
  // from the start: a signal while the script compiles must not kill
  // ubtrace (the CLI backend ignores those from before the attach).
  struct sigaction usr1{};
  usr1.sa_handler = [](int) { backends::g_sigusr1_count.fetch_add(1); };
  sigaction(SIGUSR1, &usr1, nullptr);
  backends::Reporter report(std::cerr);
  std::string error;
  bool usage = true;
  auto opts = cli::parse_options(argc, argv, error, usage);
  if (!opts) {
    report.error(error);
    if (usage)
      report.stream() << "\n" << cli::usage_text();
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
  if (opts->info) {
    cli::print_info(std::cout);
    return 0;
  }
  runtime::symbols::set_debug_search_dirs(opts->debuginfo_dirs);
  return run(*opts, report);
}
