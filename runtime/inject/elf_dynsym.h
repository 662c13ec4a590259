// The exported functions of a shared object (its .dynsym), its PT_LOAD
// segments and the libraries it needs: enough to find dlopen & co. in a
// target's libc, to name the exported function an address lies in, and to
// copy the agent with what it needs (agent_placement.h). Reads the file
// with <elf.h>; no libelf.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::inject {

struct LoadSegment {
  uint64_t vaddr = 0, memsz = 0;
  uint64_t offset = 0, filesz = 0;
  bool executable = false;
};

struct ElfFunction {
  std::string name;
  uint64_t value = 0; // link-time address
  uint64_t size = 0;
  bool ifunc = false;          // the address is a resolver, not the function
  bool default_version = true; // name@@VER (or unversioned), not name@VER
};

class ElfDynamicSymbols {
public:
  // `fd` is an open descriptor of the file (not taken over); `label` names
  // it in errors.
  static Result<ElfDynamicSymbols> read(int fd, const std::string &label);
  // Only the libraries it names (DT_NEEDED), without its symbols.
  static Result<std::vector<std::string>> read_needed(int fd,
                                                      const std::string &label);

  const std::vector<LoadSegment> &segments() const { return segments_; }
  const std::vector<ElfFunction> &functions() const { return functions_; }
  // The libraries it names (DT_NEEDED), in order.
  const std::vector<std::string> &needed() const { return needed_; }

  // The defined function `name`, preferring its default version.
  const ElfFunction *find(std::string_view name) const;
  // Every name of the function whose [value, value+size) holds `vaddr`
  // (aliases such as read/__read/__libc_read share a body).
  std::vector<std::string_view> names_at(uint64_t vaddr) const;

  // The link-time address a mapping with file offset `offset` starts at,
  // if a PT_LOAD maps that offset.
  std::optional<uint64_t> vaddr_of_mapping(uint64_t offset) const;

private:
  std::vector<LoadSegment> segments_;
  std::vector<ElfFunction> functions_; // sorted by value
  std::vector<std::string> needed_;
};

} // namespace ubtrace::runtime::inject
