#include "ast/passes/attach_points.h"

#include <cctype>
#include <map>

#include "ast/builtins.h"
#include "ast/suggest.h"

namespace ubtrace::ast {

namespace {

enum class Family { Cli, User, Gpu, Unsupported };

struct Provider {
  const char *name;
  const char *alias; // short name, "" when none
  Family family;
};

const Provider providers[] = {
    {"begin", "BEGIN", Family::Cli},
    {"end", "END", Family::Cli},
    {"interval", "i", Family::Cli},
    {"uprobe", "u", Family::User},
    {"uretprobe", "ur", Family::User},
    {"usdt", "U", Family::User},
    {"kernel", "", Family::Gpu},
    {"kernelret", "", Family::Gpu},
    // bpftrace's kernel-side probe types: understood, never run here.
    {"kprobe", "k", Family::Unsupported},
    {"kretprobe", "kr", Family::Unsupported},
    {"tracepoint", "t", Family::Unsupported},
    {"rawtracepoint", "rt", Family::Unsupported},
    {"software", "s", Family::Unsupported},
    {"hardware", "h", Family::Unsupported},
    {"profile", "p", Family::Unsupported},
    {"watchpoint", "w", Family::Unsupported},
    {"asyncwatchpoint", "aw", Family::Unsupported},
    {"fentry", "f", Family::Unsupported},
    {"fexit", "fr", Family::Unsupported},
    {"kfunc", "", Family::Unsupported},
    {"kretfunc", "", Family::Unsupported},
    {"iter", "it", Family::Unsupported},
    {"self", "", Family::Unsupported},
    {"bench", "", Family::Unsupported},
    {"test", "", Family::Unsupported},
};

const char *supported_list =
    "begin, end, interval, uprobe, uretprobe, usdt, kernel and kernelret";

const Provider *find_provider(const std::string &word) {
  for (const auto &p : providers)
    if (word == p.name || (*p.alias && word == p.alias))
      return &p;
  return nullptr;
}

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

bool parse_uint(const std::string &s, uint64_t &out) {
  if (s.empty())
    return false;
  size_t i = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    int d;
    if (std::isdigit(static_cast<unsigned char>(c)))
      d = c - '0';
    else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c)))
      d = std::tolower(c) - 'a' + 10;
    else if (c == '_')
      continue;
    else
      return false;
    v = v * base + d;
  }
  out = v;
  return true;
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

  bool expand_positional(AttachPoint &ap, std::string &raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); i++) {
      if (raw[i] != '$' || i + 1 >= raw.size() ||
          !std::isdigit(static_cast<unsigned char>(raw[i + 1]))) {
        out += raw[i];
        continue;
      }
      size_t j = i + 1;
      int n = 0;
      while (j < raw.size() && std::isdigit(static_cast<unsigned char>(raw[j])))
        n = n * 10 + (raw[j++] - '0');
      if (n == 0 || n > static_cast<int>(ctx_.positional.size())) {
        ctx_.diags().error(ap.loc)
            << "positional parameter $" << n << " is used in an attach point "
            << "but was not given (" << ctx_.positional.size() << " given)";
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
    if (auto eq = raw.find('='); eq != std::string::npos &&
                                 raw.find(':') > eq && raw.find('"') > eq)
      raw = raw.substr(eq + 1);

    auto parts = split_parts(raw);
    const Provider *p = find_provider(parts[0]);
    if (!p) {
      std::vector<std::string> names;
      for (const auto &x : providers)
        names.push_back(x.name);
      auto d = ctx_.diags().error(ap.loc);
      d << "Invalid probe type: " << parts[0];
      std::string hint = did_you_mean(parts[0], names);
      d.hint(hint.empty() ? std::string("ubtrace runs ") + supported_list +
                                " probes"
                          : hint);
      return;
    }
    ap.provider = p->name;
    if (p->family == Family::Unsupported) {
      ctx_.diags().error(ap.loc)
          << p->name << " probes are not supported by ubtrace: it runs "
          << supported_list << " probes";
      return;
    }
    auto bad = [&](const std::string &why) {
      ctx_.diags().error(ap.loc) << "Invalid " << p->name << " probe '" << ap.raw
                                 << "': " << why;
    };

    const std::string prov = p->name;
    if (prov == "begin" || prov == "end") {
      if (parts.size() != 1)
        bad(prov + " takes no arguments");
      return;
    }
    if (prov == "interval") {
      parse_interval(ap, parts, bad);
      return;
    }
    if (prov == "uprobe" || prov == "uretprobe") {
      parse_uprobe(ap, parts, bad);
      return;
    }
    if (prov == "usdt") {
      // usdt:BIN:NAME, usdt:BIN:PROVIDER:NAME
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
      if (ap.target.empty() || ap.func.empty())
        bad("expected usdt:BINARY:[PROVIDER:]NAME");
      ap.wildcard = has_wildcard(ap.target) || has_wildcard(ap.ns) ||
                    has_wildcard(ap.func);
      return;
    }
    // kernel:BIN:NAME, kernel::NAME, kernel:NAME
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

  template <class Bad>
  void parse_interval(AttachPoint &ap, const std::vector<std::string> &parts,
                      Bad &&bad) {
    static const std::map<std::string, uint64_t> unit_ns = {
        {"s", 1000000000ull}, {"ms", 1000000ull}, {"us", 1000ull},
        {"ns", 1ull}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
    if (parts.size() == 3) {
      ap.unit = parts[1];
      if (ap.unit != "hz" && !unit_ns.count(ap.unit)) {
        bad("unknown unit '" + ap.unit + "' (use s, ms, us or hz)");
        return;
      }
      if (!parse_uint(parts[2], ap.freq) || ap.freq == 0) {
        bad("the interval must be a positive integer");
        return;
      }
      return;
    }
    if (parts.size() == 2) {
      // interval:1s, interval:100ms
      const std::string &s = parts[1];
      size_t i = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
        i++;
      std::string unit = s.substr(i);
      if (i == 0 || (!unit_ns.count(unit) && unit != "hz")) {
        bad("expected interval:UNIT:N or interval:DURATION (e.g. 1s, 100ms)");
        return;
      }
      parse_uint(s.substr(0, i), ap.freq);
      ap.unit = unit;
      if (ap.freq == 0)
        bad("the interval must be a positive integer");
      return;
    }
    bad("expected interval:UNIT:N");
  }

  template <class Bad>
  void parse_uprobe(AttachPoint &ap, const std::vector<std::string> &parts,
                    Bad &&bad) {
    std::string func;
    if (parts.size() == 3) {
      ap.target = parts[1];
      func = parts[2];
    } else if (parts.size() == 4 && parts[2] == "cpp") {
      ap.target = parts[1];
      ap.lang = "cpp";
      func = parts[3];
    } else if (parts.size() >= 4) {
      // An unquoted C++ name: uprobe:./app:ns::f
      ap.target = parts[1];
      func = parts[2];
      for (size_t i = 3; i < parts.size(); i++)
        func += ":" + parts[i];
      ap.lang = "cpp";
    } else {
      bad("expected " + ap.provider + ":BINARY:FUNCTION");
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
    if (func.size() > 2 && func[0] == '0' && (func[1] == 'x' || func[1] == 'X') &&
        parse_uint(func, v)) {
      ap.address = v;
      ap.has_address = true;
    } else if (auto plus = func.rfind('+');
               plus != std::string::npos && plus > 0 &&
               parse_uint(func.substr(plus + 1), v)) {
      ap.func = func.substr(0, plus);
      ap.offset = v;
      ap.has_offset = true;
      if (ap.provider == "uretprobe") {
        bad("uretprobes cannot have an offset");
        return;
      }
    } else if (!func.empty() && std::isdigit(static_cast<unsigned char>(func[0])) &&
               parse_uint(func, v)) {
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

unsigned probe_set_of(const std::string &provider) {
  if (provider == "begin" || provider == "end" || provider == "interval")
    return PS_CLI;
  if (provider == "uprobe" || provider == "usdt")
    return PS_UPROBE;
  if (provider == "uretprobe")
    return PS_URETPROBE;
  if (provider == "kernel")
    return PS_GPU;
  if (provider == "kernelret")
    return PS_GPU_RET;
  return PS_KERNEL;
}

bool run_attach_point_pass(ASTContext &ctx) {
  size_t before = ctx.diags().error_count();
  AttachPointPass(ctx).run();
  return ctx.diags().error_count() == before;
}

} // namespace ubtrace::ast
