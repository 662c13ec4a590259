// ProbeResolver::list: `ubtrace -l` for userspace probes.
#include "runtime/symbols/demangle.h"
#include "runtime/symbols/probe_resolver.h"
#include "runtime/symbols/rust_demangle.h"
#include "runtime/symbols/wildcard.h"

#include <set>

namespace ubtrace::runtime::symbols {
namespace {

struct ListPattern {
  std::vector<UserProbeType> types;
  std::string target;
  std::string function; // uprobe FUNC, usdt NAME
  std::string provider; // usdt
  bool cpp = false;
};

std::string unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
    return s.substr(1, s.size() - 2);
  return s;
}

Result<std::vector<UserProbeType>> probe_types(const std::string &token) {
  if (token == "uprobe" || token == "u")
    return std::vector{UserProbeType::Uprobe};
  if (token == "uretprobe" || token == "ur")
    return std::vector{UserProbeType::Uretprobe};
  if (token == "usdt" || token == "U")
    return std::vector{UserProbeType::Usdt};
  if (has_wildcard(token)) {
    // Like bpftrace, a wildcard type lists entry probes, not return probes.
    std::vector<UserProbeType> types;
    Wildcard w(token);
    for (auto type : {UserProbeType::Uprobe, UserProbeType::Usdt})
      if (w.matches(user_probe_type_name(type)))
        types.push_back(type);
    if (!types.empty())
      return types;
  }
  return make_error("'" + token + "' is not a userspace probe type");
}

Result<ListPattern> parse_list_pattern(std::string_view pattern,
                                       std::optional<pid_t> pid) {
  ListPattern out;
  auto colon = pattern.find(':');
  auto types = probe_types(std::string(pattern.substr(0, colon)));
  if (!types)
    return std::move(types).take_error();
  out.types = std::move(*types);
  std::string rest = colon == std::string_view::npos
                         ? ""
                         : std::string(pattern.substr(colon + 1));
  auto next = rest.find(':');
  out.target = rest.substr(0, next);
  rest = next == std::string::npos ? "" : rest.substr(next + 1);
  if (out.target.empty()) {
    if (!pid)
      return make_error("listing userspace probes needs a binary or a pid: '" +
                        std::string(pattern) + "'");
    out.target = "*";
  }
  if (rest.starts_with("cpp:")) {
    out.cpp = true;
    rest = rest.substr(4);
  }
  out.function = unquote(rest);
  return out;
}

} // namespace

Result<std::vector<std::string>> ProbeResolver::list(std::string_view pattern,
                                                     std::optional<pid_t> pid) {
  auto parsed = parse_list_pattern(pattern, pid);
  if (!parsed)
    return std::move(parsed).take_error();
  BinaryResolveOptions binary_options = options_.binaries;
  if (pid) {
    binary_options.pid = pid;
    if (binary_options.root.empty())
      binary_options.root = process_root(*pid);
  }
  auto binaries = resolve_binary(parsed->target, binary_options);
  if (!binaries)
    return std::move(binaries).take_error();
  // Paths are shown as the process names them (an attach point with -p is
  // looked up under its root again), not through /proc/PID/root.
  const std::string &root = binary_options.root;

  std::set<std::string> lines;
  for (UserProbeType type : parsed->types) {
    const std::string prefix = std::string(user_probe_type_name(type)) + ":";
    for (const ResolvedBinary &bin : *binaries) {
      auto info = cache_->get(bin.path);
      if (!info)
        continue;
      const std::string shown =
          !root.empty() && bin.path.starts_with(root + "/")
              ? bin.path.substr(root.size())
              : bin.path;
      if (type == UserProbeType::Usdt) {
        std::string provider = parsed->provider, name = parsed->function;
        // usdt:BIN:PROVIDER:NAME, or usdt:BIN:NAME with any provider.
        if (auto c = name.find(':'); c != std::string::npos) {
          provider = name.substr(0, c);
          name = name.substr(c + 1);
        }
        Wildcard provider_w(provider.empty() ? "*" : provider);
        Wildcard name_w(name.empty() ? "*" : name);
        const auto &probes = (*info)->usdt_probes();
        if (!probes)
          continue;
        for (const UsdtProbe &p : *probes)
          if (provider_w.matches(p.provider) && name_w.matches(p.name))
            lines.insert(prefix + shown + ":" + p.provider + ":" + p.name);
        continue;
      }
      std::string function = parsed->function.empty() ? "*" : parsed->function;
      for (const ElfSymbol *sym :
           match_functions((*info)->symbols(), function, parsed->cpp)) {
        if (!parsed->cpp) {
          lines.insert(prefix + shown + ":" + sym->name);
          continue;
        }
        // A demangled name holds characters the attach point grammar
        // takes apart; quoted, the line is a usable attach point. Rust
        // paths as cpp: matches them (probe_resolver.cpp).
        auto demangled = demangle_rust(sym->name);
        if (!demangled)
          demangled = demangle(sym->name);
        lines.insert(prefix + shown + ":cpp:" +
                     (demangled ? "\"" + *demangled + "\"" : sym->name));
      }
    }
  }
  return std::vector<std::string>(lines.begin(), lines.end());
}

} // namespace ubtrace::runtime::symbols
