#include "backends/userspace/probe_name_ids.h"

namespace ubtrace::backends {

uint64_t ProbeNameIds::id(const std::string &name) {
  for (; seen_ < names_->size(); ++seen_)
    ids_.emplace((*names_)[seen_], seen_); // first wins
  auto [it, fresh] = ids_.emplace(name, names_->size());
  if (fresh) {
    names_->push_back(name);
    ++seen_;
  }
  return it->second;
}

} // namespace ubtrace::backends
