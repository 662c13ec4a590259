#include "runtime/symbols/wildcard.h"

namespace ubtrace::runtime::symbols {

bool has_wildcard(std::string_view text) {
  if (text.find_first_of("*?") != std::string_view::npos)
    return true;
  auto open = text.find('[');
  return open != std::string_view::npos &&
         text.find(']', open + 1) != std::string_view::npos;
}

Wildcard::Wildcard(std::string_view pattern) : pattern_(pattern) {
  glob_ = compile(pattern, true);
  for (const Token &t : glob_)
    if (t.kind != Token::Kind::Char)
      literal_ = false;
  bool reads_differently = false;
  for (const Token &t : glob_)
    if (t.kind == Token::Kind::AnyChar || t.kind == Token::Kind::Class)
      reads_differently = true;
  if (reads_differently) {
    star_only_ = compile(pattern, false);
    has_star_only_ = true;
  }
}

std::vector<Wildcard::Token> Wildcard::compile(std::string_view p,
                                               bool classes_and_any_char) {
  std::vector<Token> tokens;
  for (size_t i = 0; i < p.size(); ++i) {
    Token t;
    char c = p[i];
    if (c == '*') {
      // Consecutive stars are one star.
      if (tokens.empty() || tokens.back().kind != Token::Kind::AnyRun) {
        t.kind = Token::Kind::AnyRun;
        tokens.push_back(t);
      }
      continue;
    }
    if (classes_and_any_char && c == '?') {
      t.kind = Token::Kind::AnyChar;
      tokens.push_back(t);
      continue;
    }
    if (classes_and_any_char && c == '[') {
      size_t j = i + 1;
      bool negated = false;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
        negated = true;
        ++j;
      }
      size_t first = j;
      // A ']' right after the opening is a member, not the end.
      while (j < p.size() && (p[j] != ']' || j == first))
        ++j;
      if (j < p.size()) {
        t.kind = Token::Kind::Class;
        t.negated = negated;
        for (size_t k = first; k < j; ++k) {
          auto lo = static_cast<unsigned char>(p[k]);
          if (k + 2 < j && p[k + 1] == '-') {
            auto hi = static_cast<unsigned char>(p[k + 2]);
            t.ranges.emplace_back(lo, hi);
            k += 2;
          } else {
            t.ranges.emplace_back(lo, lo);
          }
        }
        tokens.push_back(std::move(t));
        i = j;
        continue;
      }
      // No closing bracket: a literal '['.
    }
    t.kind = Token::Kind::Char;
    t.c = c;
    tokens.push_back(t);
  }
  return tokens;
}

namespace {

template <class TokenT> bool token_matches_char(const TokenT &t, char c) {
  using Kind = typename TokenT::Kind;
  switch (t.kind) {
  case Kind::Char:
    return t.c == c;
  case Kind::AnyChar:
    return true;
  case Kind::Class: {
    auto u = static_cast<unsigned char>(c);
    bool in = false;
    for (auto [lo, hi] : t.ranges)
      if (u >= lo && u <= hi)
        in = true;
    return in != t.negated;
  }
  case Kind::AnyRun:
    return false; // handled by the caller
  }
  return false;
}

} // namespace

bool Wildcard::match_tokens(const std::vector<Token> &tokens,
                            std::string_view text) {
  // Classic backtracking over the last star: linear for patterns without
  // stars, O(n*m) at worst.
  size_t ti = 0, si = 0;
  size_t star_ti = SIZE_MAX, star_si = 0;
  while (si < text.size()) {
    if (ti < tokens.size() && tokens[ti].kind == Token::Kind::AnyRun) {
      star_ti = ti++;
      star_si = si;
      continue;
    }
    if (ti < tokens.size() && token_matches_char(tokens[ti], text[si])) {
      ++ti;
      ++si;
      continue;
    }
    if (star_ti == SIZE_MAX)
      return false;
    ti = star_ti + 1;
    si = ++star_si;
  }
  while (ti < tokens.size() && tokens[ti].kind == Token::Kind::AnyRun)
    ++ti;
  return ti == tokens.size();
}

bool Wildcard::matches(std::string_view text) const {
  if (match_tokens(glob_, text))
    return true;
  return has_star_only_ && match_tokens(star_only_, text);
}

} // namespace ubtrace::runtime::symbols
