#include "ast/probe_kinds.h"

#include <string>
#include <vector>

namespace ubtrace::ast {

namespace {

constexpr ProbeKindInfo kTable[] = {
#define UBT_PROBE_KIND(id, name, alias, backend, set)                          \
  {ProbeKind::id, name, alias, Backend::backend, set},
#include "ast/probe_kinds.def"
#undef UBT_PROBE_KIND
};

constexpr size_t kCount = sizeof(kTable) / sizeof(kTable[0]);

// Rows are in enum order, so that a kind indexes its row.
constexpr bool in_enum_order() {
  for (size_t i = 0; i < kCount; i++)
    if (static_cast<size_t>(kTable[i].kind) != i)
      return false;
  return true;
}
static_assert(in_enum_order(), "probe_kinds.def rows out of enum order");

} // namespace

const ProbeKindInfo *probe_kind_table(size_t &count) {
  count = kCount;
  return kTable;
}

const ProbeKindInfo &probe_kind_info(ProbeKind k) {
  return kTable[static_cast<size_t>(k)];
}

std::optional<ProbeKind> find_probe_kind(std::string_view word) {
  for (const auto &row : kTable)
    if (word == row.name || (!row.alias.empty() && word == row.alias))
      return row.kind;
  return std::nullopt;
}

const std::string &runnable_probe_kinds() {
  static const std::string list = [] {
    std::vector<std::string_view> names;
    for (const auto &row : kTable)
      if (row.backend != Backend::None)
        names.push_back(row.name);
    std::string s;
    for (size_t i = 0; i < names.size(); i++) {
      if (i)
        s += i + 1 == names.size() ? " and " : ", ";
      s += names[i];
    }
    return s;
  }();
  return list;
}

} // namespace ubtrace::ast
