#include "runtime/symbols/probe_resolver.h"

#include "runtime/symbols/demangle.h"
#include "runtime/symbols/non_returning.h"
#include "runtime/symbols/rust_demangle.h"
#include "runtime/symbols/wildcard.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace ubtrace::runtime::symbols {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool name_matches(const ElfSymbol &sym, const Wildcard &pattern, bool cpp,
                  bool keep_parameters) {
  if (pattern.matches(sym.name))
    return true;
  // Rust names by their path (uprobe:./app:app::parse, or with cpp:).
  if (cpp)
    if (auto rust = demangle_rust(sym.name))
      return pattern.matches(*rust);
  if (!cpp || !looks_mangled(sym.name))
    return false;
  auto demangled = demangle(sym.name);
  if (!demangled)
    return false;
  if (!keep_parameters)
    *demangled = strip_parameters(std::move(*demangled));
  return pattern.matches(*demangled);
}

// Merges probes of one binary at the same vaddr into one (aliases).
std::vector<ResolvedProbe> merge_aliases(std::vector<ResolvedProbe> probes) {
  std::sort(probes.begin(), probes.end(),
            [](const ResolvedProbe &a, const ResolvedProbe &b) {
              if (a.vaddr != b.vaddr)
                return a.vaddr < b.vaddr;
              return a.function < b.function;
            });
  std::vector<ResolvedProbe> out;
  for (auto &p : probes) {
    if (!out.empty() && out.back().vaddr == p.vaddr) {
      out.back().aliases.push_back(p.function);
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
}

// "a, b, c and 4 more" for a warning.
std::string name_list(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; i++)
    out += (i ? ", " : "") + names[i];
  if (names.size() > kShown)
    out += " and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

std::string refusal_error(const ResolvedProbe &p, std::string_view why) {
  return "cannot attach a uretprobe to " + p.binary + ":" + p.function +
         ": it " + std::string(why) +
         ", so a return probe there would corrupt the program";
}

} // namespace

std::string_view return_probe_refusal(const BinaryInfo &binary,
                                      const ElfSymbol &sym) {
  if (binary.elf().entry() != 0 && sym.vaddr == binary.elf().entry())
    return kEntryPointReason;
  for (const ElfSymbol *alias :
       binary.symbols().functions_starting_at(sym.vaddr)) {
    std::string_view why = non_returning_reason(alias->name);
    if (!why.empty())
      return why;
  }
  return non_returning_reason(sym.name);
}

std::vector<const ElfSymbol *>
match_functions(const SymbolTable &table, std::string_view pattern, bool cpp) {
  std::vector<const ElfSymbol *> out;
  Wildcard wildcard(pattern);
  if (wildcard.is_literal() && !cpp) {
    out = table.functions_named(pattern);
  } else {
    const bool keep_parameters = pattern.find('(') != std::string_view::npos;
    for (const ElfSymbol &sym : table.symbols()) {
      if (!sym.is_function())
        continue;
      // GCC's partial-inlining clones cannot be traced as functions;
      // bpftrace leaves them out of every wildcard match.
      if (!wildcard.is_literal() &&
          sym.name.find(".part.") != std::string::npos)
        continue;
      if (name_matches(sym, wildcard, cpp, keep_parameters))
        out.push_back(&sym);
    }
  }
  std::sort(out.begin(), out.end(), [](const ElfSymbol *a, const ElfSymbol *b) {
    return a->name != b->name ? a->name < b->name : a->vaddr < b->vaddr;
  });
  return out;
}

ProbeResolver::ProbeResolver(ProbeResolverOptions options,
                             std::shared_ptr<BinaryCache> cache)
    : options_(std::move(options)), cache_(std::move(cache)) {
  if (!cache_)
    cache_ = std::make_shared<BinaryCache>();
}

Result<std::vector<ResolvedProbe>>
ProbeResolver::expand(const AttachRequest &request) {
  matched_nothing_ = false;
  warnings_.clear();
  BinaryResolveOptions binary_options = options_.binaries;
  if (request.pid) {
    binary_options.pid = request.pid;
    if (binary_options.root.empty())
      binary_options.root = process_root(*request.pid);
  }
  if (request.type != UserProbeType::Usdt && request.function.empty() &&
      !request.address)
    return make_error(std::string(user_probe_type_name(request.type)) +
                      " should be attached to a function and/or address");
  if (request.address && has_wildcard(request.target))
    return make_error("cannot use wildcards with an absolute address");
  if (request.type == UserProbeType::Uretprobe && request.offset &&
      *request.offset != 0)
    return make_error("uretprobes can not be attached to a function offset");
  // With -p and no binary, bpftrace probes the process's executable
  // (uprobe) or everything it maps (usdt).
  std::string target = request.target;
  if (target.empty() && request.pid) {
    if (request.type == UserProbeType::Usdt) {
      target = "*";
    } else {
      std::error_code ec;
      auto exe = std::filesystem::read_symlink(
          "/proc/" + std::to_string(*request.pid) + "/exe", ec);
      if (ec)
        return make_error("cannot read the executable of process " +
                          std::to_string(*request.pid) + ": " + ec.message());
      target = exe.string();
    }
  }
  auto binaries = resolve_binary(target, binary_options);
  if (!binaries)
    return std::move(binaries).take_error();
  Result<std::vector<ResolvedProbe>> probes = make_error("unknown probe type");
  switch (request.type) {
  case UserProbeType::Uprobe:
  case UserProbeType::Uretprobe:
    probes = expand_uprobe(request, *binaries);
    break;
  case UserProbeType::Usdt:
    probes = expand_usdt(request, *binaries);
    break;
  }
  // Files found under the process's root are named as it names them.
  if (probes && !binary_options.root.empty())
    for (auto &p : *probes)
      if (size_t at = p.name.find(":" + binary_options.root + "/");
          at != std::string::npos)
        p.name.erase(at + 1, binary_options.root.size());
  return probes;
}

Result<void> ProbeResolver::place_offset(const BinaryInfo &binary,
                                         ResolvedProbe &probe) {
  const std::string where = binary.path() + ":" + probe.function;
  if (probe.offset != 0) {
    if (probe.function_size == 0)
      return make_error("cannot check the offset of " + where +
                        ": the symbol has no size");
    if (probe.offset >= probe.function_size)
      return make_error("Offset outside the function bounds ('" +
                        probe.function + "' size is " +
                        std::to_string(probe.function_size) + ")");
    if (options_.instruction_boundary) {
      auto code =
          binary.elf().read_at_vaddr(probe.function_vaddr, probe.function_size);
      if (code) {
        auto ok = options_.instruction_boundary(*code, probe.offset);
        if (ok && !*ok)
          return make_error("could not add " +
                            std::string(user_probe_type_name(probe.type)) +
                            " into middle of instruction: " + where + "+" +
                            std::to_string(probe.offset));
      }
    }
  }
  probe.vaddr = probe.function_vaddr + probe.offset;
  const LoadSegment *seg = binary.elf().segment_of(probe.vaddr);
  auto file_offset = binary.elf().vaddr_to_offset(probe.vaddr);
  if (!seg || !seg->executable || !file_offset)
    return make_error(where + " at " + hex(probe.vaddr) +
                      " is not in an executable segment");
  probe.file_offset = *file_offset;
  return {};
}

Result<ResolvedProbe> ProbeResolver::probe_at_address(const BinaryInfo &binary,
                                                      const ResolvedProbe &base,
                                                      uint64_t address) {
  ResolvedProbe p = base;
  p.vaddr = address;
  p.name = probe_name(p, true);
  if (p.type == UserProbeType::Uretprobe && address == binary.elf().entry())
    return make_error("cannot attach a uretprobe to " + binary.path() + ":" +
                      hex(address) + ": it " + std::string(kEntryPointReason) +
                      ", so a return probe there would corrupt the program");
  const ElfSymbol *sym = binary.symbols().function_at(address);
  if (!sym) {
    // A stripped binary: no instruction boundary to check against.
    if (!options_.allow_unresolved_address)
      return make_error("Could not resolve address: " + binary.path() + ":" +
                        hex(address));
    auto off = binary.elf().vaddr_to_offset(address);
    if (!off)
      return make_error(binary.path() + ":" + hex(address) +
                        " is not stored in the file");
    p.file_offset = *off;
    return p;
  }
  p.function = sym->name;
  p.function_vaddr = sym->vaddr;
  p.function_size = sym->size;
  p.offset = address - sym->vaddr;
  if (p.type == UserProbeType::Uretprobe && p.offset != 0)
    return make_error("uretprobes cannot be attached at function offset. "
                      "(address resolved to: " +
                      sym->name + "+" + std::to_string(p.offset) + ")");
  if (p.type == UserProbeType::Uretprobe)
    if (std::string_view why = return_probe_refusal(binary, *sym); !why.empty())
      return make_error(refusal_error(p, why));
  if (auto ok = place_offset(binary, p); !ok)
    return std::move(ok).take_error();
  return p;
}

Result<std::vector<ResolvedProbe>>
ProbeResolver::expand_uprobe(const AttachRequest &request,
                             const std::vector<ResolvedBinary> &binaries) {
  std::vector<ResolvedProbe> all;
  std::string last_error;
  // Return probes a wildcard matched where they would harm the program.
  const bool returns = request.type == UserProbeType::Uretprobe;
  const bool explicit_name = !has_wildcard(request.function);
  std::vector<std::string> skipped;
  std::vector<std::string> zero_size;
  for (const ResolvedBinary &bin : binaries) {
    auto info = cache_->get(bin.path);
    if (!info) {
      last_error = info.error();
      continue;
    }
    const BinaryInfo &binary = **info;
    // Go code runs on goroutine stacks as small as 2 KiB, grown by the Go
    // runtime's own checks; a probe runs on the stack of the code it
    // interrupts and needs more than Go guarantees below a function's
    // entry (a cgo-linked Go program traced this way corrupted a
    // neighbouring goroutine's stack). Refused until probes run on a stack
    // of their own.
    if (binary.elf().section(".gopclntab") ||
        binary.elf().section(".go.buildinfo"))
      return make_error(bin.path +
                        " is a Go program: uprobes on Go code are not "
                        "supported (a probe runs on the goroutine's stack, "
                        "which can be too small for it)");
    const SymbolTable &table = binary.symbols();
    ResolvedProbe base;
    base.type = request.type;
    base.binary = bin.path;
    base.binary_kind = binary.elf().kind();
    base.cpp = request.cpp;

    if (request.address) {
      auto p = probe_at_address(binary, base, *request.address);
      if (!p)
        return std::move(p).take_error();
      all.push_back(std::move(*p));
      continue;
    }

    std::vector<ResolvedProbe> found;
    for (const ElfSymbol *sym :
         match_functions(table, request.function, request.cpp)) {
      if (sym->size == 0 && !options_.allow_zero_size) {
        if (explicit_name)
          return make_error(
              "Could not determine boundary for " + sym->name +
              " (symbol has size 0).\nUse --unsafe to force attachment. "
              "WARNING: This option could lead to data corruption in the "
              "target process.");
        zero_size.push_back(sym->name);
        continue;
      }
      ResolvedProbe p = base;
      p.function = sym->name;
      p.function_vaddr = sym->vaddr;
      p.function_size = sym->size;
      p.offset = request.offset.value_or(0);
      p.ifunc = sym->type == SymbolType::IndirectFunction && p.offset == 0;
      if (returns)
        if (std::string_view why = return_probe_refusal(binary, *sym);
            !why.empty()) {
          if (explicit_name)
            return make_error(refusal_error(p, why));
          skipped.push_back(sym->name);
          continue;
        }
      if (auto ok = place_offset(binary, p); !ok)
        return std::move(ok).take_error();
      p.name = probe_name(p, false);
      found.push_back(std::move(p));
    }
    if (options_.merge_aliases)
      found = merge_aliases(std::move(found));
    std::sort(found.begin(), found.end(),
              [](const ResolvedProbe &a, const ResolvedProbe &b) {
                return a.function != b.function ? a.function < b.function
                                                : a.vaddr < b.vaddr;
              });
    for (auto &p : found)
      all.push_back(std::move(p));
  }
  std::string what =
      request.target + ":" + (request.cpp ? "cpp:" : "") + request.function;
  if (!skipped.empty()) {
    std::string why = "function" + std::string(skipped.size() == 1 ? "" : "s") +
                      " where a return probe would corrupt the program (" +
                      "it never returns, or is entered without a return "
                      "address): " +
                      name_list(skipped);
    if (all.empty())
      return make_error("uretprobe:" + what + ": every match is a " + why);
    warnings_.push_back("uretprobe:" + what + ": skipped " +
                        std::to_string(skipped.size()) + " " + why);
  }
  if (!zero_size.empty()) {
    std::string why = "function" +
                      std::string(zero_size.size() == 1 ? "" : "s") +
                      " of size 0, where a patch has no known end to stay "
                      "within (--unsafe attaches them): " +
                      name_list(zero_size);
    if (all.empty())
      return make_error(std::string(user_probe_type_name(request.type)) + ":" +
                        what + ": every match is a " + why);
    warnings_.push_back(std::string(user_probe_type_name(request.type)) + ":" +
                        what + ": skipped " + std::to_string(zero_size.size()) +
                        " " + why);
  }
  if (all.empty()) {
    if (!last_error.empty() && binaries.size() == 1)
      return make_error(last_error);
    matched_nothing_ = true;
    return make_error(
        has_wildcard(request.function) || request.cpp
            ? "no function matches '" + what + "'"
            : "could not resolve symbol: " +
                  (binaries.size() == 1 ? binaries[0].path : request.target) +
                  ":" + request.function);
  }
  return all;
}

Result<std::vector<ResolvedProbe>>
ProbeResolver::expand_usdt(const AttachRequest &request,
                           const std::vector<ResolvedBinary> &binaries) {
  Wildcard provider(request.provider.empty() ? "*" : request.provider);
  Wildcard name(request.function.empty() ? "*" : request.function);
  std::vector<ResolvedProbe> all;
  for (const ResolvedBinary &bin : binaries) {
    auto info = cache_->get(bin.path);
    if (!info) {
      if (binaries.size() == 1)
        return std::move(info).take_error();
      continue;
    }
    const auto &probes = (*info)->usdt_probes();
    if (!probes) {
      if (binaries.size() == 1)
        return make_error(probes.error());
      continue;
    }
    for (const UsdtProbe &probe : *probes) {
      if (!provider.matches(probe.provider) || !name.matches(probe.name))
        continue;
      for (const UsdtSite &site : probe.sites) {
        ResolvedProbe p;
        p.type = UserProbeType::Usdt;
        p.binary = bin.path;
        p.binary_kind = (*info)->elf().kind();
        p.function = probe.name;
        p.provider = probe.provider;
        p.vaddr = site.vaddr;
        p.file_offset = site.file_offset;
        if (const ElfSymbol *f = (*info)->symbols().function_at(site.vaddr)) {
          p.function_vaddr = f->vaddr;
          p.function_size = f->size;
        }
        p.usdt_args = site.args;
        p.usdt_args_error = site.args_error;
        p.semaphore = probe.semaphore;
        p.name = probe_name(p, false);
        all.push_back(std::move(p));
      }
    }
  }
  if (all.empty()) {
    std::string what =
        request.target + ":" +
        (request.provider.empty() ? "" : request.provider + ":") +
        request.function;
    matched_nothing_ = true;
    return make_error("no usdt probe matches '" + what + "'");
  }
  return all;
}

} // namespace ubtrace::runtime::symbols
