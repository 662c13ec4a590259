// Tokens of PTX text, with their offsets, so the rewriter can splice text
// into the module at exact places and leave the rest byte for byte. Comments
// are skipped; whether a newline came before a token is kept because a few
// directives (.version, .target, .file, .loc) end at the end of their line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ubtrace::runtime::gpu {

enum class PtxTokenKind : uint8_t {
  Word,   // directive, opcode, identifier, register: .reg ld.param.u64 %r1
  Number, // 64, 0x1f, 0f3F800000, 9.0
  String, // "quoted"
  Punct,  // one character: { } ( ) [ ] ; , : @ ! + - < > = |
  End,
};

struct PtxToken {
  PtxTokenKind kind = PtxTokenKind::End;
  std::string_view text;
  size_t offset = 0;
  bool starts_line = false; // a newline (or the start of text) precedes it

  size_t end() const { return offset + text.size(); }
  bool is(char punct) const {
    return kind == PtxTokenKind::Punct && text.size() == 1 && text[0] == punct;
  }
  bool is_word(std::string_view word) const {
    return kind == PtxTokenKind::Word && text == word;
  }
  bool is_directive() const {
    return kind == PtxTokenKind::Word && !text.empty() && text[0] == '.';
  }
};

class PtxLexer {
public:
  explicit PtxLexer(std::string_view text, size_t start = 0)
      : text_(text), pos_(start), at_line_start_(true) {}

  PtxToken next();
  PtxToken peek();
  std::string_view text() const { return text_; }

private:
  PtxToken scan();

  std::string_view text_;
  size_t pos_;
  bool at_line_start_;
  bool has_peeked_ = false;
  PtxToken peeked_;
};

// True for characters that can continue an identifier, opcode or register.
constexpr bool is_ptx_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

} // namespace ubtrace::runtime::gpu
