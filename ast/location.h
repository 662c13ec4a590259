// Source text and locations within it.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ubtrace::ast {

// A script as read from a file, `-e` (named "stdin") or standard input.
struct SourceFile {
  SourceFile(std::string name, std::string text);
  std::string name;
  std::string text;
  std::vector<std::string> lines; // text split at '\n', without the newlines
};

struct Position {
  int line = 1;
  int column = 1; // 1-based, in bytes
};

// A span [begin, end) of a source file: end is one past the last column.
struct Location {
  const SourceFile *file = nullptr;
  Position begin;
  Position end;
  // Inside a macro's expansion: the call it was expanded at (which may be
  // inside another expansion), kept by the ASTContext; null elsewhere.
  const Location *expanded_from = nullptr;

  bool valid() const { return file != nullptr; }
  // "FILE:L:C1-C2" (or "FILE:L1-L2" when the span covers several lines).
  std::string str() const;
  // The source line(s) and, for a one-line span, a `~` underline.
  std::vector<std::string> context() const;
};

// The smallest span covering both.
Location operator+(const Location &a, const Location &b);

} // namespace ubtrace::ast
