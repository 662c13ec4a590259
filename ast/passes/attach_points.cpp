#include "ast/passes/attach_points.h"

#include "ast/builtins.h"
#include "ast/int_literal.h"
#include "ast/perf_events.h"
#include "ast/suggest.h"
#include "ast/syscalls.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

namespace ubtrace::ast {

namespace {

// Splits at ':' outside double quotes; quotes are removed.
std::vector<std::string> split_parts(const std::string &s) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (c == '\\' && quoted && i + 1 < s.size()) {
      parts.back() += s[++i];
    } else if (c == ':' && !quoted) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

bool has_wildcard(const std::string &s) {
  return s.find_first_of("*?[") != std::string::npos;
}

class AttachPointPass {
public:
  explicit AttachPointPass(ASTContext &ctx) : ctx_(ctx) {}

  void run() {
    for (auto *probe : ctx_.root->probes)
      for (auto *ap : probe->attach_points)
        parse(*ap);
  }

private:
  ASTContext &ctx_;
  std::set<std::string> bench_names_, test_names_;

  bool expand_positional(AttachPoint &ap, std::string &raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); i++) {
      if (raw[i] != '$' || i + 1 >= raw.size() ||
          !std::isdigit(static_cast<unsigned char>(raw[i + 1]))) {
        out += raw[i];
        continue;
      }
      size_t j = i + 1;
      // Saturates: any index past the parameters given is an error.
      size_t n = 0;
      while (j < raw.size() &&
             std::isdigit(static_cast<unsigned char>(raw[j]))) {
        n = std::min<size_t>(n * 10 + (raw[j] - '0'), 1000000);
        j++;
      }
      if (n == 0 || n > ctx_.positional.size()) {
        ctx_.diags().error(ap.loc)
            << "positional parameter $" << raw.substr(i + 1, j - i - 1)
            << " is used in an attach point but was not given ("
            << ctx_.positional.size() << " given)";
        return false;
      }
      out += ctx_.positional[n - 1];
      i = j - 1;
    }
    raw = out;
    return true;
  }

  void parse(AttachPoint &ap) {
    std::string raw = ap.raw;
    if (!expand_positional(ap, raw))
      return;
    // name=provider:... (a probe label, reserved by bpftrace)
    if (auto eq = raw.find('=');
        eq != std::string::npos && raw.find(':') > eq && raw.find('"') > eq)
      raw = raw.substr(eq + 1);

    auto parts = split_parts(raw);
    std::optional<ProbeKind> kind = find_probe_kind(parts[0]);
    if (!kind) {
      unknown_provider(ap, parts[0]);
      return;
    }
    const ProbeKindInfo &info = probe_kind_info(*kind);
    if (info.backend == Backend::None) {
      ctx_.diags().error(ap.loc)
          << info.name << " probes are not supported by ubtrace: it runs "
          << runnable_probe_kinds() << " probes";
      return;
    }
    ap.kind = kind;
    auto bad = [&](const std::string &why) {
      ctx_.diags().error(ap.loc)
          << "Invalid " << info.name << " probe '" << ap.raw << "': " << why;
    };
    switch (*kind) {
    case ProbeKind::Begin:
    case ProbeKind::End:
      if (parts.size() != 1)
        bad(std::string(info.name) + " takes no arguments");
      return;
    case ProbeKind::Interval:
    case ProbeKind::Profile:
      return parse_interval(ap, parts, bad);
    case ProbeKind::Software:
    case ProbeKind::Hardware:
      return parse_perf_event(ap, parts, *kind == ProbeKind::Hardware, bad);
    case ProbeKind::Watchpoint:
    case ProbeKind::AsyncWatchpoint:
      return parse_watchpoint(ap, parts, bad);
    case ProbeKind::Tracepoint:
      return parse_tracepoint(ap, parts, bad);
    case ProbeKind::Bench:
    case ProbeKind::Test: {
      // bench:NAME and test:NAME, run by --bench and --test; a name once
      // per script and kind.
      bool bench = *kind == ProbeKind::Bench;
      if (parts.size() != 2 || parts[1].empty()) {
        ctx_.diags().error(ap.loc)
            << (bench ? "bench" : "test") << " probes must have a name";
        return;
      }
      ap.target = parts[1];
      if (!(bench ? bench_names_ : test_names_).insert(ap.target).second)
        ctx_.diags().error(ap.loc)
            << "\"" << ap.target << "\" was used as the name for more than one "
            << (bench ? "BENCH" : "TEST") << " probe";
      return;
    }
    case ProbeKind::Self:
      // self:signal:SIGUSR1, the one trigger and signal bpftrace has.
      if (parts.size() != 3) {
        bad("expected self:signal:SIGUSR1");
        return;
      }
      ap.target = parts[1];
      ap.func = parts[2];
      if (ap.target != "signal")
        ctx_.diags().error(ap.loc)
            << ap.target << " is not a supported trigger";
      else if (ap.func != "SIGUSR1")
        ctx_.diags().error(ap.loc) << ap.func << " is not a supported signal";
      return;
    case ProbeKind::Uprobe:
    case ProbeKind::Uretprobe:
      return parse_uprobe(ap, parts, bad);
    case ProbeKind::Usdt:
      return parse_usdt(ap, parts, bad);
    case ProbeKind::GpuKernel:
    case ProbeKind::GpuKernelRet:
      return parse_gpu_kernel(ap, parts, bad);
      // The kinds no backend runs, refused above: each row of Backend None
      // is a case here, any other row needs its own.
#define UBT_PROBE_KIND(id, name, alias, backend, set) UBT_CASE_IF_##backend(id)
#include "ast/probe_kinds.def"
#undef UBT_PROBE_KIND
      return;
    }
  }

  void unknown_provider(AttachPoint &ap, const std::string &word) {
    std::vector<std::string> names;
    // Spelled-out aliases too (BEGIN for a misspelt BEGN; first when the
    // word is in capitals), not the one- and two-letter ones every short
    // word is close to.
    bool capitals = std::any_of(word.begin(), word.end(), [](unsigned char c) {
      return std::isupper(c);
    });
    size_t count = 0;
    const ProbeKindInfo *rows = probe_kind_table(count);
    for (size_t i = 0; i < count; i++) {
      const ProbeKindInfo &x = rows[i];
      bool alias = x.alias.size() > 2;
      if (alias && capitals)
        names.emplace_back(x.alias);
      names.emplace_back(x.name);
      if (alias && !capitals)
        names.emplace_back(x.alias);
    }
    auto d = ctx_.diags().error(ap.loc);
    d << "Invalid probe type: " << word;
    std::string hint = did_you_mean(word, names);
    d.hint(hint.empty() ? "ubtrace runs " + runnable_probe_kinds() + " probes"
                        : hint);
  }

  // usdt:BIN:NAME, usdt:BIN:PROVIDER:NAME
  template <class Bad>
  void parse_usdt(AttachPoint &ap, const std::vector<std::string> &parts,
                  Bad &&bad) {
    if (parts.size() == 3) {
      ap.target = parts[1];
      ap.func = parts[2];
    } else if (parts.size() == 4) {
      ap.target = parts[1];
      ap.ns = parts[2];
      ap.func = parts[3];
    } else {
      bad("expected usdt:BINARY:[PROVIDER:]NAME");
      return;
    }
    // usdt::[PROVIDER:]NAME: every file the -p/-c process maps (the
    // resolver's rule for an empty binary).
    if (ap.func.empty())
      bad("expected usdt:BINARY:[PROVIDER:]NAME");
    ap.wildcard =
        has_wildcard(ap.target) || has_wildcard(ap.ns) || has_wildcard(ap.func);
  }

  // kernel:BIN:NAME, kernel::NAME, kernel:NAME
  template <class Bad>
  void parse_gpu_kernel(AttachPoint &ap, const std::vector<std::string> &parts,
                        Bad &&bad) {
    std::string prov(ap.provider());
    if (parts.size() == 2) {
      ap.func = parts[1];
    } else if (parts.size() == 3) {
      ap.target = parts[1];
      ap.func = parts[2];
    } else {
      bad("expected " + prov + ":BINARY:KERNEL or " + prov + "::KERNEL");
      return;
    }
    if (ap.func.empty())
      bad("missing the CUDA kernel name");
    ap.wildcard = has_wildcard(ap.target) || has_wildcard(ap.func);
  }

  // interval:UNIT:N with UNIT one of s, ms, us, hz; or interval:N, a rate
  // in nanoseconds that takes a duration suffix (1s, 100ms) and is kept in
  // microseconds, as bpftrace does.
  template <class Bad>
  void parse_interval(AttachPoint &ap, const std::vector<std::string> &parts,
                      Bad &&bad) {
    std::string why;
    if (parts.size() == 2) {
      uint64_t ns = 0;
      if (!parse_int_literal(parts[1], ns, why)) {
        bad("invalid rate: " + why);
        return;
      }
      if (ns < 1000) {
        bad("the minimum rate is 1000 nanoseconds (1us), found " +
            std::to_string(ns));
        return;
      }
      ap.unit = "us";
      ap.freq = ns / 1000;
      ap.period_ns = ap.freq * 1000;
      return;
    }
    if (parts.size() != 3) {
      bad("expected interval:UNIT:N or interval:DURATION (e.g. 1s, 100ms)");
      return;
    }
    ap.unit = parts[1];
    if (ap.unit != "s" && ap.unit != "ms" && ap.unit != "us" &&
        ap.unit != "hz") {
      bad("'" + ap.unit +
          "' is not an accepted unit of time (use s, ms, us or hz)");
      return;
    }
    if (!parse_int_literal(parts[2], ap.freq, why)) {
      bad("invalid rate: " + why);
      return;
    }
    if (ap.freq == 0) {
      bad("the interval must be a positive integer");
      return;
    }
    // The period, in nanoseconds, must fit 64 bits and be at least 1us
    // (the shortest interval:N accepts): a rate of 10^9 hz would be a
    // period of 0 and spin, 10^11 s would overflow into a short one.
    if (ap.unit == "hz") {
      if (ap.freq > 1000000)
        bad("the maximum rate is 1000000 hz (one every 1us), found " +
            std::to_string(ap.freq));
      ap.period_ns = 1000000000ull / ap.freq;
      return;
    }
    uint64_t unit_ns = ap.unit == "s"    ? 1000000000ull
                       : ap.unit == "ms" ? 1000000ull
                                         : 1000ull;
    if (ap.freq > UINT64_MAX / unit_ns)
      bad("the interval is too long: " + std::to_string(ap.freq) + ap.unit +
          " is more than 2^64 nanoseconds");
    ap.period_ns = ap.freq * unit_ns;
  }

  // software:EVENT[:COUNT] and hardware:EVENT[:COUNT] (ast/perf_events.h):
  // cpu-clock (cpu) and task-clock, whose count is nanoseconds of CPU time,
  // run as profile probes do; the other events are perf events.
  template <class Bad>
  void parse_perf_event(AttachPoint &ap, const std::vector<std::string> &parts,
                        bool hardware, Bad &&bad) {
    const char *type = hardware ? "hardware" : "software";
    if (parts.size() != 2 && parts.size() != 3) {
      bad(std::string("expected ") + type + ":EVENT or " + type +
          ":EVENT:COUNT");
      return;
    }
    ap.target = parts[1];
    const PerfEventInfo *event = find_perf_event(hardware, ap.target);
    if (!event) {
      std::string known;
      for (const PerfEventInfo &e :
           hardware ? hardware_events() : software_events())
        known += (known.empty() ? "" : ", ") + std::string(e.name);
      bad("unknown " + std::string(type) + " event '" + ap.target +
          "'; the events are " + known);
      return;
    }
    ap.perf_event = !event->cpu_time;
    ap.perf_type = event->type;
    ap.perf_config = event->config;
    ap.perf_in_kernel = event->in_kernel;
    ap.freq = event->default_count;
    std::string why;
    if (parts.size() == 3 && !parse_int_literal(parts[2], ap.freq, why)) {
      bad("invalid count: " + why);
      return;
    }
    if (ap.freq == 0) {
      bad("the count must be a positive integer");
      return;
    }
    ap.period_ns = ap.freq;
  }

  // watchpoint:ADDR:LEN:MODE (and asyncwatchpoint:): a hardware breakpoint
  // on LEN bytes at ADDR of the traced process, for the modes x86-64's
  // debug registers have (w, rw, x), every access a sample.
  template <class Bad>
  void parse_watchpoint(AttachPoint &ap, const std::vector<std::string> &parts,
                        Bad &&bad) {
    if (parts.size() != 4) {
      bad("expected " + parts[0] + ":ADDRESS:LENGTH:MODE");
      return;
    }
    uint64_t address = 0, len = 0;
    uint32_t bits = 0;
    std::string why;
    if (!parse_int_literal(parts[1], address, why)) {
      bad("invalid address: " + why);
      return;
    }
    if (!parse_int_literal(parts[2], len, why)) {
      bad("invalid length: " + why);
      return;
    }
    if (address == 0) {
      bad("a watchpoint must be attached to a non-zero address");
      return;
    }
    if (address >= kBreakpointAddressLimit) {
      bad("the address is not one of a process's (ubtrace watches the "
          "traced process's memory, not the kernel's)");
      return;
    }
    if (len != 1 && len != 2 && len != 4 && len != 8) {
      bad("the length must be one of 1, 2, 4, 8");
      return;
    }
    std::string mode = parts[3];
    std::sort(mode.begin(), mode.end());
    for (size_t i = 0; i < mode.size(); i++) {
      char c = mode[i];
      if (c != 'r' && c != 'w' && c != 'x') {
        bad("the mode must be a combination of r, w and x");
        return;
      }
      if (i > 0 && mode[i - 1] == c) {
        bad("a mode may not be repeated");
        return;
      }
      bits |= c == 'r' ? kBreakpointR : c == 'w' ? kBreakpointW : kBreakpointX;
    }
    if (mode != "rw" && mode != "w" && mode != "x") {
      bad("invalid watchpoint mode '" + parts[3] +
          "': x86-64 watches w, rw or x");
      return;
    }
    // An access at an address the length does not divide: the kernel
    // refuses the breakpoint (the debug registers watch aligned ranges).
    if (mode != "x" && address % len != 0) {
      bad("the address is not a multiple of the length (the debug "
          "registers watch aligned ranges)");
      return;
    }
    ap.perf_event = true;
    ap.perf_type = kPerfTypeBreakpoint;
    ap.perf_config = bits;
    ap.perf_config1 = address;
    // An instruction breakpoint has the one length the CPU knows.
    ap.perf_config2 = mode == "x" ? 8 : len;
    ap.func = mode;
    ap.unit = parts[2]; // the length as written, for the probe's name
    ap.freq = 1;        // every access
    ap.period_ns = 1;
  }

  // tracepoint:syscalls:EVENT and tracepoint:raw_syscalls:EVENT (wildcards
  // in both parts), run in the traced process; other categories refused.
  template <class Bad>
  void parse_tracepoint(AttachPoint &ap, const std::vector<std::string> &parts,
                        Bad &&bad) {
    if (parts.size() != 3 || parts[1].empty() || parts[2].empty()) {
      bad("expected tracepoint:CATEGORY:EVENT");
      return;
    }
    ap.target = parts[1];
    ap.func = parts[2];
    ap.wildcard = ap.target.find_first_of("*?[") != std::string::npos ||
                  ap.func.find_first_of("*?[") != std::string::npos;
    std::string why;
    auto events = match_syscall_events(ap.target, ap.func, why);
    if (!why.empty())
      bad(why);
    else if (events.empty()) {
      // bpftrace's text, then the events there are.
      auto d = ctx_.diags().error(ap.loc);
      d << "No matches for tracepoint " << ap.target << ":" << ap.func << ".";
      d.hint("system call tracepoints are tracepoint:syscalls:sys_enter_NAME "
             "and sys_exit_NAME, and tracepoint:raw_syscalls:sys_enter and "
             "sys_exit");
    }
  }

  template <class Bad>
  void parse_source_location(AttachPoint &ap,
                             const std::vector<std::string> &parts, Bad &&bad) {
    if (ap.kind != ProbeKind::Uprobe) {
      bad("source code locations (BINARY@FILE:LINE) can only be used with "
          "uprobe");
      return;
    }
    size_t at = parts[1].find('@');
    ap.target = parts[1].substr(0, at);
    ap.source_file = parts[1].substr(at + 1);
    if (has_wildcard(ap.target) || has_wildcard(ap.source_file)) {
      bad("Cannot use wildcards with source code location");
      return;
    }
    if ((parts.size() != 3 && parts.size() != 4) || ap.target.empty() ||
        ap.source_file.empty() || parts[2].empty()) {
      bad("Invalid uprobe arguments, expected format: "
          "uprobe:TARGET@FILE:LINE[:COL]");
      return;
    }
    auto number = [&](const std::string &text, const char *what,
                      uint32_t &out) {
      bool digits = !text.empty() && text.size() <= 9 &&
                    text.find_first_not_of("0123456789") == std::string::npos;
      if (!digits) {
        bad(std::string("Invalid ") + what + " number: '" + text + "'");
        return false;
      }
      out = static_cast<uint32_t>(std::stoul(text));
      return true;
    };
    if (!number(parts[2], "line", ap.line) ||
        (parts.size() == 4 && !number(parts[3], "column", ap.column)))
      return;
    if (!ctx_.debug_types) {
      bad("source code locations need the binary's DWARF line table, which "
          "cannot be read here");
      return;
    }
    std::string error;
    auto addr = ctx_.debug_types->line_address(ap, error);
    if (!addr) {
      bad(error);
      return;
    }
    ap.address = *addr;
    ap.has_address = true;
  }

  template <class Bad>
  void parse_uprobe(AttachPoint &ap, const std::vector<std::string> &parts,
                    Bad &&bad) {
    std::string func;
    // uprobe:BIN@FILE:LINE[:COL]: the first statement of that line, from
    // the binary's DWARF line table.
    if (parts.size() >= 2 && parts[1].find('@') != std::string::npos &&
        ap.raw.find('"') == std::string::npos) {
      parse_source_location(ap, parts, bad);
      return;
    }
    if (parts.size() == 3) {
      ap.target = parts[1];
      func = parts[2];
    } else if (parts.size() == 4 && parts[2] == "cpp") {
      ap.target = parts[1];
      ap.lang = "cpp";
      func = parts[3];
    } else if (parts.size() >= 4) {
      // An unquoted C++ name: uprobe:./app:ns::f or uprobe:./app:cpp:ns::f
      ap.target = parts[1];
      size_t first = parts[2] == "cpp" ? 3 : 2;
      func = parts[first];
      for (size_t i = first + 1; i < parts.size(); i++)
        func += ":" + parts[i];
      ap.lang = "cpp";
    } else {
      bad("expected " + std::string(ap.provider()) + ":BINARY:FUNCTION");
      return;
    }
    if (ap.target.empty()) {
      bad("missing the binary or library");
      return;
    }
    if (func.empty()) {
      bad("missing the function");
      return;
    }
    uint64_t v;
    std::string why;
    // C++ names hold '+' (operator+): only an unquoted FUNC+OFFSET counts.
    bool quoted = !ap.raw.empty() && ap.raw.back() == '"';
    size_t plus =
        ap.lang.empty() && !quoted ? func.find('+') : std::string::npos;
    if (plus != std::string::npos) {
      if (func.find('+', plus + 1) != std::string::npos) {
        bad("cannot take more than one offset");
        return;
      }
      if (plus == 0 || plus + 1 == func.size()) {
        bad("invalid offset");
        return;
      }
      if (!parse_int_literal(func.substr(plus + 1), v, why)) {
        bad("invalid offset: " + why);
        return;
      }
      ap.func = func.substr(0, plus);
      ap.offset = v;
      ap.has_offset = true;
      if (ap.kind == ProbeKind::Uretprobe) {
        bad("uretprobes cannot have an offset");
        return;
      }
    } else if (std::isdigit(static_cast<unsigned char>(func[0])) &&
               parse_int_literal(func, v, why)) {
      ap.address = v;
      ap.has_address = true;
    } else {
      ap.func = func;
    }
    ap.wildcard = has_wildcard(ap.target) || has_wildcard(ap.func);
    if (ap.wildcard && (ap.has_offset || ap.has_address))
      bad("an offset or address cannot be used with wildcards");
  }
};

} // namespace

bool run_attach_point_pass(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  AttachPointPass(ctx).run();
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
