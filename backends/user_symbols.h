// Symbols of traced processes for printing (usym, ustack, func): the
// runtime's symboliser behind the printers' interface. Processes are
// snapshotted when probes attach, so their addresses still resolve after
// they exit.
#pragma once

#include <memory>

#include "backends/output/context.h"
#include "runtime/symbols/symbolizer.h"

namespace ubtrace::backends {

class UserSymbols : public output::Symbolizer {
public:
  explicit UserSymbols(runtime::symbols::SymbolizerOptions options)
      : symbols_(options) {}
  runtime::symbols::Symbolizer &runtime() { return symbols_; }

  std::vector<output::SymbolFrame> user(uint64_t addr, int64_t pid) override;
  std::vector<output::SymbolFrame> kernel(uint64_t addr) override { return {}; }
  std::optional<output::BuildIdFrame> build_id(uint64_t addr, int64_t pid) override;

private:
  runtime::symbols::Symbolizer symbols_;
};

} // namespace ubtrace::backends
