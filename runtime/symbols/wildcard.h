// Wildcard patterns for attach points and listings: `*` (any run of
// characters, ':' and '/' included), `?` (one character) and `[...]`
// (a class: `[abc]`, `[a-z]`, `[!a]` or `[^a]` negated; a `]` right after
// the opening bracket is a member). A `[` without a closing `]` is literal.
//
// bpftrace 0.26 itself only expands `*` and matches `[`, `]` and `?`
// literally, so a pattern with brackets also matches a name that contains
// the bracketed text literally ("foo[abi:cxx11]" matches the C++ name
// "foo[abi:cxx11]" as well as "fooa"): a user copying a demangled name
// from a listing gets what bpftrace would give them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::symbols {

// True when `text` holds `*`, `?`, or a `[` followed later by `]`.
bool has_wildcard(std::string_view text);

class Wildcard {
public:
  explicit Wildcard(std::string_view pattern);

  bool matches(std::string_view text) const;
  // No wildcard at all: matching is string equality.
  bool is_literal() const { return literal_; }
  const std::string &pattern() const { return pattern_; }

private:
  struct Token {
    enum class Kind : uint8_t { Char, AnyChar, AnyRun, Class };
    Kind kind = Kind::Char;
    char c = 0;
    bool negated = false;
    std::vector<std::pair<unsigned char, unsigned char>> ranges; // Class
  };

  static std::vector<Token> compile(std::string_view pattern,
                                    bool classes_and_any_char);
  static bool match_tokens(const std::vector<Token> &tokens,
                           std::string_view text);

  std::string pattern_;
  std::vector<Token> glob_;
  // `*` only, every other character literal (bpftrace's reading); empty when
  // it would read the same as glob_.
  std::vector<Token> star_only_;
  bool has_star_only_ = false;
  bool literal_ = true;
};

} // namespace ubtrace::runtime::symbols
