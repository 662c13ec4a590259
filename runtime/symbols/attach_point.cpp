#include "runtime/symbols/attach_point.h"

namespace ubtrace::runtime::symbols {

std::string_view user_probe_type_name(UserProbeType type) {
  switch (type) {
  case UserProbeType::Uprobe:
    return "uprobe";
  case UserProbeType::Uretprobe:
    return "uretprobe";
  case UserProbeType::Usdt:
    return "usdt";
  }
  return "?";
}

std::string probe_name(const ResolvedProbe &p, bool by_address) {
  std::string n(user_probe_type_name(p.type));
  n += ":" + p.binary;
  if (p.type == UserProbeType::Usdt)
    return n + ":" + p.provider + ":" + p.function;
  if (by_address)
    return n + ":" + std::to_string(p.vaddr);
  if (p.cpp)
    n += ":cpp";
  n += ":" + p.function;
  if (p.offset != 0)
    n += "+" + std::to_string(p.offset);
  return n;
}

} // namespace ubtrace::runtime::symbols
