// The ids `probe` reads for the attach points a wildcard (or a system call
// probe's list of calls) expanded to: one id per name, so two attach
// points of a block that reach the same place (`f*` and `foo`) count
// under one key, as bpftrace's probe names (strings) do. An id is the
// name's index in the session's list of names, which every part that
// expands attach points shares (targets, the system-wide sampler): names
// another part appended since the last call are taken in first.
#pragma once

#include "runtime/bundle.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ubtrace::backends {

class ProbeNameIds {
public:
  explicit ProbeNameIds(std::vector<std::string> *names = nullptr)
      : names_(names) {}
  void attach(std::vector<std::string> *names) { names_ = names; }

  uint64_t id(const std::string &name);
  // A probe's attach point named `name`: the probe's own id (its bundle
  // index) when it is the only one under the probe's name, else the
  // name's.
  uint64_t of(size_t spec_index, const runtime::ProbeSpec &spec, bool many,
              const std::string &name) {
    return many || name != spec.name ? id(name) : spec_index;
  }
  // The same for one system call a system call probe runs at.
  uint64_t of(size_t spec_index, const runtime::ProbeSpec &spec,
              const runtime::SyscallSite &site) {
    return of(spec_index, spec, spec.syscalls.size() > 1, site.name);
  }

private:
  std::vector<std::string> *names_;
  std::unordered_map<std::string, uint64_t> ids_; // of the first `seen_`
  size_t seen_ = 0;
};

} // namespace ubtrace::backends
