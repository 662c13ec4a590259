#include "runtime/gpu/ptx_lexer.h"

namespace ubtrace::runtime::gpu {
namespace {

bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == '$' || c == '%' || c == '.';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

} // namespace

PtxToken PtxLexer::next() {
  if (has_peeked_) {
    has_peeked_ = false;
    return peeked_;
  }
  return scan();
}

PtxToken PtxLexer::peek() {
  if (!has_peeked_) {
    peeked_ = scan();
    has_peeked_ = true;
  }
  return peeked_;
}

PtxToken PtxLexer::scan() {
  bool newline = at_line_start_;
  at_line_start_ = false;
  // Whitespace and comments.
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      newline = true;
      ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t close = text_.find("*/", pos_ + 2);
      size_t stop = close == std::string_view::npos ? text_.size() : close + 2;
      if (text_.substr(pos_, stop - pos_).find('\n') != std::string_view::npos)
        newline = true;
      pos_ = stop;
    } else if (c == '\0') {
      pos_ = text_.size(); // a NUL ends PTX text
    } else {
      break;
    }
  }
  PtxToken token;
  token.offset = pos_;
  token.starts_line = newline;
  if (pos_ >= text_.size()) {
    token.kind = PtxTokenKind::End;
    token.text = text_.substr(text_.size());
    return token;
  }
  size_t start = pos_;
  char c = text_[pos_];
  if (is_word_start(c)) {
    ++pos_;
    // Opcodes and state spaces can hold "::" (ld.global.L2::cache_hint,
    // .shared::cluster); a label's single ':' ends the word.
    while (pos_ < text_.size()) {
      if (is_ptx_word_char(text_[pos_])) {
        ++pos_;
      } else if (text_[pos_] == ':' && pos_ + 2 < text_.size() &&
                 text_[pos_ + 1] == ':' && is_ptx_word_char(text_[pos_ + 2])) {
        pos_ += 2;
      } else {
        break;
      }
    }
    token.kind = PtxTokenKind::Word;
  } else if (is_digit(c)) {
    ++pos_;
    while (pos_ < text_.size() && is_ptx_word_char(text_[pos_]))
      ++pos_;
    token.kind = PtxTokenKind::Number;
  } else if (c == '"') {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
        ++pos_;
      ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '"')
      ++pos_;
    token.kind = PtxTokenKind::String;
  } else {
    ++pos_;
    token.kind = PtxTokenKind::Punct;
  }
  token.text = text_.substr(start, pos_ - start);
  return token;
}

} // namespace ubtrace::runtime::gpu
