#include "ast/suggest.h"

#include <algorithm>
#include <cctype>

namespace ubtrace::ast {

static size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t sub =
          prev[j - 1] + (std::tolower(a[i - 1]) != std::tolower(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string &word,
                          const std::vector<std::string> &candidates) {
  // A name of one or two characters is close to everything: say nothing.
  size_t sigil = !word.empty() && (word[0] == '$' || word[0] == '@');
  if (word.size() - sigil < 3)
    return "";
  std::string best;
  size_t best_d = SIZE_MAX;
  size_t limit = std::max<size_t>(1, word.size() / 3);
  for (const auto &c : candidates) {
    if (c == word)
      continue;
    size_t d = edit_distance(word, c);
    if (d <= limit && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string &word,
                         const std::vector<std::string> &candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : "Did you mean '" + m + "'?";
}

} // namespace ubtrace::ast
