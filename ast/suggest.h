// "Did you mean ...?" for misspelled names.
#pragma once

#include <string>
#include <vector>

namespace ubtrace::ast {

// The closest candidate within a small edit distance, or "".
std::string closest_match(const std::string &word,
                          const std::vector<std::string> &candidates);

// "Did you mean 'X'?" or "" when nothing is close.
std::string did_you_mean(const std::string &word,
                         const std::vector<std::string> &candidates);

} // namespace ubtrace::ast
