// Expands an attach point into concrete probes (binary, symbol, vaddr and
// file offset; for USDT also each site's arguments and the semaphore), and
// lists probes for `ubtrace -l`. Matching follows bpftrace 0.26:
//
//   - FUNC without wildcards names a symbol exactly (every function symbol
//     of that name: two static functions called `helper` give two probes,
//     where bpftrace attaches to the first it reads);
//   - FUNC with wildcards matches function symbol names (FUNC and IFUNC)
//     as stored, skipping GCC's ".part.N" clones as bpftrace does;
//   - with `cpp`, a mangled name also matches through its demangled form,
//     without the parameter list unless FUNC holds '(' (so
//     "ns::Foo::bar" matches every overload);
//   - symbols at the same address (aliases: malloc and __libc_malloc) make
//     one probe, named by the first match in byte order, the others kept in
//     `aliases` (bpftrace's uprobe_multi attaches each address once);
//   - a uretprobe is never put where it harms the program (the ELF entry,
//     functions that never return or are entered by a jump: see
//     non_returning.h): an explicit one is an error, a wildcard skips them
//     with one warning (take_warnings()).
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/attach_point.h"
#include "runtime/symbols/binary_cache.h"
#include "runtime/symbols/binary_resolver.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::symbols {

// Whether byte `offset` of a function whose machine code is `code` starts
// an instruction; nullopt when the checker cannot tell. The CLI plugs in a
// decoder (Zydis, as the inline hooks use); without one only the symbol's
// size is checked.
using InstructionBoundaryCheck = std::function<std::optional<bool>(
    std::span<const uint8_t> code, uint64_t offset)>;

struct ProbeResolverOptions {
  bool merge_aliases = true;
  // BIN:ADDRESS outside every symbol (a stripped binary): accepted
  // unchecked (bpftrace's --unsafe) instead of an error.
  bool allow_unresolved_address = false;
  // A function whose symbol has size 0 (no known end for a patch to stay
  // within): attached as it is (--unsafe) instead of refused (an explicit
  // name) or skipped and said (a wildcard), as bpftrace does.
  bool allow_zero_size = false;
  InstructionBoundaryCheck instruction_boundary;
  BinaryResolveOptions binaries;
};

class ProbeResolver {
public:
  explicit ProbeResolver(ProbeResolverOptions options = {},
                         std::shared_ptr<BinaryCache> cache = nullptr);

  // Every probe the attach point stands for, sorted by binary then name
  // (USDT: by provider, name, then site address). An error names what was
  // not found.
  Result<std::vector<ResolvedProbe>> expand(const AttachRequest &request);

  // `ubtrace -l PATTERN`: "uprobe:BIN:FUNC", "uretprobe:BIN:FUNC",
  // "usdt:BIN:[PROVIDER:]NAME", "uprobe:BIN:cpp:FUNC"; FUNC/NAME may be
  // left out (all). One line per probe as bpftrace prints it, sorted and
  // without duplicates.
  Result<std::vector<std::string>> list(std::string_view pattern,
                                        std::optional<pid_t> pid = {});

  // Warnings of the last expand(): return probes a wildcard would have
  // put where they harm the program (non_returning.h), skipped, in one
  // line per request.
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

  // Whether the last expand() failed only because nothing matched (the
  // binary was read and has no such function or USDT probe), which
  // config missing_probes governs; other failures stop the trace.
  bool last_matched_nothing() const { return matched_nothing_; }

  BinaryCache &cache() { return *cache_; }
  const std::shared_ptr<BinaryCache> &shared_cache() const { return cache_; }

private:
  bool matched_nothing_ = false;
  Result<std::vector<ResolvedProbe>>
  expand_uprobe(const AttachRequest &request,
                const std::vector<ResolvedBinary> &binaries);
  Result<std::vector<ResolvedProbe>>
  expand_usdt(const AttachRequest &request,
              const std::vector<ResolvedBinary> &binaries);
  Result<ResolvedProbe> probe_at_address(const BinaryInfo &binary,
                                         const ResolvedProbe &base,
                                         uint64_t address);
  // Sets vaddr and file_offset of a probe at `offset` into its function,
  // checking the offset against the function's size and instructions.
  Result<void> place_offset(const BinaryInfo &binary, ResolvedProbe &probe);

  ProbeResolverOptions options_;
  std::shared_ptr<BinaryCache> cache_;
  std::vector<std::string> warnings_;
};

// Why a return probe on `sym` of `binary` would harm the program (it is the
// ELF entry point, or it or an alias at its address never returns or is
// entered by a jump: non_returning.h), or empty.
std::string_view return_probe_refusal(const BinaryInfo &binary,
                                      const ElfSymbol &sym);

// The function names of `table` that FUNC selects (see above), sorted.
std::vector<const ElfSymbol *>
match_functions(const SymbolTable &table, std::string_view pattern, bool cpp);

} // namespace ubtrace::runtime::symbols
