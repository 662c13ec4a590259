// Source lines and inlined functions from DWARF (libdw), for symbolised
// stacks: what bpftrace prints as "func+off@file:line" and "[inlined] f".
// Opened lazily per binary (from the binary or its separate debug file);
// CUs are indexed by their address ranges, so binaries without
// .debug_aranges (clang's default) work too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

struct SourceLocation {
  std::string file; // as the line table names it (usually absolute)
  uint32_t line = 0;
};

struct DwarfLookup {
  // Functions inlined at the address, innermost first, each with the
  // location of the code it is executing (the innermost: the address's
  // line; the others: the call site of the next inner one).
  struct Inlined {
    std::string name; // demangled when it was a linkage name
    std::optional<SourceLocation> location;
  };
  std::vector<Inlined> inlined;
  // Where the containing (not inlined) function is: the address's line, or
  // the call site of the outermost inlined function.
  std::optional<SourceLocation> location;
};

class DwarfInfo {
public:
  // nullptr when the file has no usable DWARF.
  static std::unique_ptr<DwarfInfo> open(const std::string &path);
  ~DwarfInfo();
  DwarfInfo(const DwarfInfo &) = delete;
  DwarfInfo &operator=(const DwarfInfo &) = delete;

  DwarfLookup lookup(uint64_t vaddr, bool demangle) const;

private:
  struct Impl;
  explicit DwarfInfo(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ubtrace::runtime::symbols
