#include "runtime/inject/command_line.h"

#include <optional>

namespace ubtrace::runtime::inject {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

bool is_operator(char c) {
  switch (c) {
  case '|':
  case '&':
  case ';':
  case '<':
  case '>':
  case '(':
  case ')':
    return true;
  default:
    return false;
  }
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

// A `$` that a shell would expand: $NAME, ${...}, $(...), $1, $?, ...
bool starts_expansion(std::string_view text, size_t dollar) {
  if (dollar + 1 >= text.size())
    return false;
  char next = text[dollar + 1];
  return is_name_char(next) || next == '{' || next == '(' || next == '?' ||
         next == '$' || next == '!' || next == '#' || next == '@' ||
         next == '*' || next == '-';
}

std::string where(size_t index) {
  return "at column " + std::to_string(index + 1);
}

struct Word {
  std::string text;
  // Length of the unquoted, unescaped prefix: an assignment's NAME= must
  // lie in it, as in a shell.
  size_t plain_prefix = 0;
  bool plain_so_far = true;

  void add(char c, bool plain) {
    if (!plain)
      plain_so_far = false;
    if (plain_so_far)
      ++plain_prefix;
    text.push_back(c);
  }
  void mark_quoted() { plain_so_far = false; }
};

std::optional<size_t> assignment_name_end(const Word &word) {
  const std::string &t = word.text;
  if (t.empty() || !is_name_start(t[0]))
    return std::nullopt;
  size_t i = 1;
  while (i < t.size() && is_name_char(t[i]))
    ++i;
  if (i >= t.size() || t[i] != '=' || i >= word.plain_prefix)
    return std::nullopt;
  return i;
}

Error expansion_error(size_t index) {
  return make_error("shell expansion " + where(index) +
                    " is not supported: -c runs the program without a "
                    "shell (quote it with '...' to pass it literally)");
}

} // namespace

Result<CommandLine> split_command(std::string_view text) {
  std::vector<Word> words;
  std::optional<Word> current;
  auto word = [&]() -> Word & {
    if (!current)
      current.emplace();
    return *current;
  };

  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (is_blank(c)) {
      if (current)
        words.push_back(std::move(*current));
      current.reset();
      ++i;
      continue;
    }
    if (is_operator(c))
      return make_error(std::string("shell operator '") + c + "' " + where(i) +
                        " is not supported: -c runs the program without a "
                        "shell (use -c \"sh -c '...'\" to trace a shell)");
    if (c == '`' || (c == '$' && starts_expansion(text, i)))
      return expansion_error(i);
    if (c == '\\') {
      if (i + 1 >= text.size())
        return make_error("trailing backslash " + where(i));
      if (text[i + 1] != '\n')
        word().add(text[i + 1], false); // continuation otherwise
      i += 2;
      continue;
    }
    if (c == '\'') {
      size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos)
        return make_error("unterminated single quote " + where(i));
      Word &w = word();
      w.mark_quoted();
      for (size_t j = i + 1; j < close; ++j)
        w.add(text[j], false);
      i = close + 1;
      continue;
    }
    if (c == '"') {
      Word &w = word();
      w.mark_quoted();
      size_t j = i + 1;
      for (;; ++j) {
        if (j >= text.size())
          return make_error("unterminated double quote " + where(i));
        char q = text[j];
        if (q == '"')
          break;
        if (q == '`' || (q == '$' && starts_expansion(text, j)))
          return expansion_error(j);
        if (q == '\\' && j + 1 < text.size()) {
          char n = text[j + 1];
          if (n == '\\' || n == '"' || n == '$' || n == '`') {
            w.add(n, false);
            ++j;
            continue;
          }
          if (n == '\n') {
            ++j;
            continue;
          }
        }
        w.add(q, false);
      }
      i = j + 1;
      continue;
    }
    word().add(c, true);
    ++i;
  }
  if (current)
    words.push_back(std::move(*current));

  CommandLine command;
  size_t first = 0;
  while (first < words.size()) {
    auto name_end = assignment_name_end(words[first]);
    if (!name_end)
      break;
    command.env.push_back(words[first].text);
    ++first;
  }
  if (first == words.size())
    return make_error(words.empty() ? "empty command"
                                    : "no program to run after the "
                                      "variable assignments");
  for (size_t k = first; k < words.size(); ++k)
    command.argv.push_back(std::move(words[k].text));
  return command;
}

} // namespace ubtrace::runtime::inject
