#include "ast/builtins.h"

#include <cctype>

namespace ubtrace::ast {

static const std::vector<BuiltinInfo> &table() {
  static const std::vector<BuiltinInfo> t = {
      {"pid", PS_HOST | PS_GPU_ANY},
      {"tid", PS_HOST},
      {"uid", PS_HOST},
      {"gid", PS_HOST},
      {"cpu", PS_HOST},
      {"comm", PS_HOST | PS_GPU_ANY},
      {"nsecs", PS_ALL},
      {"elapsed", PS_ALL},
      {"kstack", PS_HOST},
      {"ustack", PS_HOST},
      {"retval", PS_URETPROBE | PS_KERNEL},
      {"func", PS_USER | PS_KERNEL | PS_GPU_ANY},
      {"probe", PS_ALL},
      {"curtask", PS_HOST},
      {"rand", PS_HOST},
      {"cgroup", PS_HOST},
      {"cpid", PS_HOST},
      {"numaid", PS_HOST},
      {"jiffies", PS_HOST},
      {"username", PS_HOST},
      {"usermode", PS_HOST},
      {"ncpus", PS_ALL},
      {"args", PS_UPROBE | PS_URETPROBE | PS_KERNEL | PS_GPU_ANY},
      {"ctx", PS_HOST},
      {"threadIdx", PS_GPU_ANY},
      {"blockIdx", PS_GPU_ANY},
      {"blockDim", PS_GPU_ANY},
      {"gridDim", PS_GPU_ANY},
      {"smid", PS_GPU_ANY},
      {"warpid", PS_GPU_ANY},
      {"laneid", PS_GPU_ANY},
      {"__builtin_probe", PS_ALL},
      {"__builtin_probetype", PS_ALL},
      {"__builtin_arch", PS_ALL},
  };
  return t;
}

int builtin_arg_index(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
    return -1;
  auto digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0')
    return -1;
  int n = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1000)
      return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<BuiltinInfo> lookup_builtin(std::string_view name) {
  for (const auto &b : table())
    if (b.name == name)
      return b;
  if (builtin_arg_index(name, "arg") >= 0)
    return BuiltinInfo{std::string(name), PS_UPROBE | PS_KERNEL | PS_GPU_ANY};
  if (builtin_arg_index(name, "sarg") >= 0)
    return BuiltinInfo{std::string(name), PS_UPROBE | PS_KERNEL};
  return std::nullopt;
}

bool is_builtin_name(std::string_view name) {
  return lookup_builtin(name).has_value();
}

const std::vector<std::string> &builtin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto &b : table())
      v.push_back(b.name);
    v.push_back("arg0");
    v.push_back("sarg0");
    return v;
  }();
  return names;
}

} // namespace ubtrace::ast
