#include "runtime/inject/loader_block.h"

#include <cstring>

namespace ubtrace::runtime::inject {
namespace {

constexpr char kRegionName[] = "ubtrace-inject";

} // namespace

Result<std::vector<uint8_t>> build_loader_block(const LoaderBlock &fixed,
                                                const LoaderStrings &strings) {
  struct Limit {
    const std::string &text;
    size_t capacity;
    const char *what;
  };
  for (const Limit &limit :
       {Limit{strings.path, UBT_LB_PATH_MAX, "the agent path"},
        Limit{strings.entry_name, UBT_LB_ENTRY_NAME_MAX, "the entry symbol"},
        Limit{strings.entry_arg, UBT_LB_ENTRY_ARG_MAX, "the entry argument"}})
    if (limit.text.size() >= limit.capacity)
      return make_error(std::string(limit.what) + " is too long (" +
                        std::to_string(limit.text.size()) + " bytes, at most " +
                        std::to_string(limit.capacity - 1) + ")");

  LoaderBlock block = fixed;
  std::vector<uint8_t> image(sizeof block);
  auto append = [&image](std::string_view text) {
    auto offset = static_cast<uint32_t>(image.size());
    image.insert(image.end(), text.begin(), text.end());
    image.push_back(0);
    return offset;
  };
  block.name_offset = append(kRegionName);
  block.path_offset = append(strings.path);
  block.entry_name_offset =
      strings.entry_name.empty() ? 0 : append(strings.entry_name);
  block.entry_arg_offset = append(strings.entry_arg);
  std::memcpy(image.data(), &block, sizeof block);
  static_assert(UBT_LB_STRINGS + UBT_LB_PATH_MAX + UBT_LB_ENTRY_NAME_MAX +
                    UBT_LB_ENTRY_ARG_MAX + sizeof kRegionName <=
                UBT_LB_MAX_SIZE);
  return image;
}

} // namespace ubtrace::runtime::inject
