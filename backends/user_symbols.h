// Symbols of traced processes for printing (usym, ustack, func): the
// runtime's symboliser behind the printers' interface. Processes are
// snapshotted when probes attach, so their addresses still resolve after
// they exit. Children the traced process forks (their hits carry their own
// pids) resolve through their own snapshot while they are still a copy of
// the traced program (they map the trace's maps region, which an exec
// drops and no other process has), else through the traced process's.
#pragma once

#include "backends/output/context.h"
#include "runtime/symbols/symbolizer.h"

#include <memory>

namespace ubtrace::backends {

class UserSymbols : public output::Symbolizer {
public:
  explicit UserSymbols(runtime::symbols::SymbolizerOptions options)
      : symbols_(options) {}
  runtime::symbols::Symbolizer &runtime() { return symbols_; }
  // `pid` is a traced process; `region_fd` the maps region it maps.
  void set_traced(pid_t pid, int region_fd);

  std::vector<output::SymbolFrame> user(uint64_t addr, int64_t pid) override;
  std::vector<output::SymbolFrame> kernel(uint64_t addr) override { return {}; }
  std::optional<output::BuildIdFrame> build_id(uint64_t addr,
                                               int64_t pid) override;
  std::optional<output::MappingInfo> mapping(uint64_t addr,
                                             int64_t pid) override;

private:
  runtime::symbols::Symbolizer symbols_;
};

} // namespace ubtrace::backends
