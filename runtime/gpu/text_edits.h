// Splicing text into a string at recorded offsets, the way the PTX
// rewriter edits a module without re-printing it.
#pragma once

#include <algorithm>
#include <cassert>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::gpu {

struct TextEdit {
  size_t offset = 0;  // where, in the original text
  size_t erase = 0;   // original bytes replaced
  std::string insert; // new text
  int order = 0;      // among edits at the same offset, lower goes first
};

// Applies edits, which must not overlap; edits at one offset go in `order`,
// then in the order given.
inline std::string apply_edits(std::string_view text,
                               std::vector<TextEdit> edits) {
  // Sorted by offset, then order, then position in `edits` (std::sort on
  // indices: libstdc++'s stable_sort trips a deprecation warning in clang).
  std::vector<size_t> index(edits.size());
  for (size_t i = 0; i < index.size(); ++i)
    index[i] = i;
  std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
    const TextEdit &x = edits[a], &y = edits[b];
    if (x.offset != y.offset)
      return x.offset < y.offset;
    if (x.order != y.order)
      return x.order < y.order;
    return a < b;
  });
  std::string out;
  size_t extra = 0;
  for (const TextEdit &e : edits)
    extra += e.insert.size();
  out.reserve(text.size() + extra);
  size_t at = 0;
  for (size_t i : index) {
    const TextEdit &e = edits[i];
    assert(e.offset >= at && "overlapping text edits");
    out.append(text.substr(at, e.offset - at));
    out.append(e.insert);
    at = e.offset + e.erase;
  }
  out.append(text.substr(std::min(at, text.size())));
  return out;
}

} // namespace ubtrace::runtime::gpu
