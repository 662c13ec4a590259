#include "runtime/symbols/proc_maps.h"

#include "runtime/file_text.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

namespace ubtrace::runtime::symbols {
namespace {

// Consumes a hex number from the front of `s`.
bool take_hex(std::string_view &s, uint64_t &out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  if (ec != std::errc() || p == s.data())
    return false;
  s.remove_prefix(static_cast<size_t>(p - s.data()));
  return true;
}

bool take_dec(std::string_view &s, uint64_t &out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  if (ec != std::errc() || p == s.data())
    return false;
  s.remove_prefix(static_cast<size_t>(p - s.data()));
  return true;
}

bool take_char(std::string_view &s, char c) {
  if (s.empty() || s.front() != c)
    return false;
  s.remove_prefix(1);
  return true;
}

void skip_spaces(std::string_view &s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
}

// "55d0c5a4e000-55d0c5a50000 r--p 00000000 fd:01 1234   /usr/bin/cat"
bool parse_line(std::string_view line, Mapping &m) {
  uint64_t major = 0, minor = 0;
  if (!take_hex(line, m.start) || !take_char(line, '-') ||
      !take_hex(line, m.end) || !take_char(line, ' ') || line.size() < 5)
    return false;
  m.readable = line[0] == 'r';
  m.writable = line[1] == 'w';
  m.executable = line[2] == 'x';
  m.shared = line[3] == 's';
  line.remove_prefix(4);
  skip_spaces(line);
  if (!take_hex(line, m.offset))
    return false;
  skip_spaces(line);
  if (!take_hex(line, major) || !take_char(line, ':') || !take_hex(line, minor))
    return false;
  m.dev_major = static_cast<uint32_t>(major);
  m.dev_minor = static_cast<uint32_t>(minor);
  skip_spaces(line);
  if (!take_dec(line, m.inode))
    return false;
  skip_spaces(line);
  constexpr std::string_view kDeleted = " (deleted)";
  if (line.ends_with(kDeleted)) {
    m.deleted = true;
    line.remove_suffix(kDeleted.size());
  }
  m.path = std::string(line);
  return true;
}

} // namespace

std::vector<Mapping> parse_proc_maps(std::string_view text) {
  std::vector<Mapping> maps;
  while (!text.empty()) {
    auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{}
                                         : text.substr(eol + 1);
    Mapping m;
    if (parse_line(line, m))
      maps.push_back(std::move(m));
  }
  return maps;
}

Result<std::vector<Mapping>> read_proc_maps(pid_t pid) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/maps");
  if (!text)
    return make_error(text.error());
  return parse_proc_maps(*text);
}

std::vector<std::string> mapped_file_paths(const std::vector<Mapping> &maps) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const Mapping &m : maps)
    if (m.is_file() && seen.insert(m.path).second)
      paths.push_back(m.path);
  return paths;
}

} // namespace ubtrace::runtime::symbols
