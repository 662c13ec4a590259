#include "ast/location.h"

#include <algorithm>

namespace ubtrace::ast {

SourceFile::SourceFile(std::string name_, std::string text_)
    : name(std::move(name_)), text(std::move(text_)) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

std::string Location::str() const {
  std::string out = file ? file->name + ":" : std::string();
  if (begin.line != end.line)
    return out + std::to_string(begin.line) + "-" + std::to_string(end.line);
  return out + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
         "-" + std::to_string(end.column);
}

std::vector<std::string> Location::context() const {
  std::vector<std::string> out;
  if (!file || begin.line < 1 ||
      begin.line > static_cast<int>(file->lines.size()))
    return out;
  if (begin.line != end.line) {
    int last = std::min<int>(end.line, file->lines.size());
    for (int l = begin.line; l <= last; l++)
      out.push_back(file->lines[l - 1]);
    return out;
  }
  // Tabs widen to four columns, in the line and in its underline alike.
  const std::string &src = file->lines[begin.line - 1];
  std::string line, marks;
  for (size_t i = 0; i < src.size(); i++) {
    bool tab = src[i] == '\t';
    line += tab ? std::string(4, ' ') : std::string(1, src[i]);
    if (static_cast<int>(i) < end.column - 1) {
      char m = static_cast<int>(i) < begin.column - 1 ? ' ' : '~';
      marks += std::string(tab ? 4 : 1, m);
    }
  }
  // A span at the end of a line (e.g. "unexpected end of file") still gets
  // one mark so the reader sees where.
  if (marks.find('~') == std::string::npos) {
    marks.resize(std::max<int>(begin.column - 1, 0), ' ');
    marks += '~';
  }
  out.push_back(line);
  out.push_back(marks);
  return out;
}

Location operator+(const Location &a, const Location &b) {
  if (!a.valid())
    return b;
  if (!b.valid())
    return a;
  Location r;
  r.file = a.file;
  r.expanded_from = a.expanded_from;
  auto before = [](const Position &x, const Position &y) {
    return x.line < y.line || (x.line == y.line && x.column < y.column);
  };
  r.begin = before(a.begin, b.begin) ? a.begin : b.begin;
  r.end = before(a.end, b.end) ? b.end : a.end;
  return r;
}

} // namespace ubtrace::ast
