// ubtrace_config_table: the table of config variables (runtime/config/
// config.def) as the manual lists it, and as plain rows for tests.
//
//   ubtrace_config_table --list          name, kind, default: one a line
//   ubtrace_config_table --check PAGE    PAGE's list is the table's (exit 1
//                                        and what differs when not)
//   ubtrace_config_table --write PAGE    rewrites PAGE's list from the table
//                                        (`ninja -C build man-config`)
//
// The list is the part of ubtrace(8) between the two marker comments
// kBegin and kEnd; everything else in the page is written by hand.
#include "runtime/config/config.h"

#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

using namespace ubtrace::runtime;

constexpr std::string_view kBegin =
    ".\\\" The list below is generated from runtime/config/config.def: edit "
    "the\n.\\\" table there, then run `ninja -C build man-config`.\n";
constexpr std::string_view kEnd = ".\\\" End of the generated list.\n";

// Plain text as roff: `x` in bold, hyphens as minus signs, backslashes
// escaped, each sentence on a line of its own (so it ends with roff's
// sentence space), nothing a request could start with.
std::string roff(std::string_view text) {
  std::string out;
  bool bold = false;
  for (size_t i = 0; i < text.size(); i++) {
    char c = text[i];
    if (c == ' ' && i > 0 && text[i - 1] == '.' && i + 1 < text.size() &&
        std::isupper(static_cast<unsigned char>(text[i + 1]))) {
      out += '\n';
    } else if (c == '`') {
      out += bold ? "\\fR" : "\\fB";
      bold = !bold;
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\''))
    out.insert(0, "\\&");
  return out;
}

std::string default_text(const ConfigVar &v) {
  return v.default_text.empty() ? "\"\"" : std::string(v.default_text);
}

// What values a variable takes, as a sentence.
std::string values(const ConfigVar &v) {
  switch (v.kind) {
  case ConfigKind::Integer:
    return "An integer from " + std::to_string(v.min) + " to " +
           std::to_string(v.max) + ".";
  case ConfigKind::Boolean:
    return "Either \\fBtrue\\fR or \\fBfalse\\fR (or 1 or 0).";
  case ConfigKind::String:
    return "Any text.";
  case ConfigKind::Choice: {
    std::string s = "One of ";
    for (size_t i = 0; i < v.choices.size(); i++) {
      if (i)
        s += i + 1 == v.choices.size() ? " or " : ", ";
      s += "\\fB" + roff(v.choices[i]) + "\\fR";
    }
    return s + ".";
  }
  }
  return "";
}

std::string man_list() {
  std::string out(kBegin);
  for (const auto &v : config_vars()) {
    out += ".TP\n.BI " + std::string(v.name) + " \" \\fR(" +
           roff(default_text(v)) + ")\\fP\"\n";
    out += roff(v.doc) + "\n" + values(v) + "\n";
  }
  out += kEnd;
  return out;
}

bool read(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

// Where the generated list is in `page`: [begin, end).
bool find_list(const std::string &page, size_t &begin, size_t &end) {
  begin = page.find(kBegin);
  if (begin == std::string::npos)
    return false;
  end = page.find(kEnd, begin);
  if (end == std::string::npos)
    return false;
  end += kEnd.size();
  return true;
}

int usage() {
  std::cerr << "usage: ubtrace_config_table --list | --check PAGE | "
               "--write PAGE\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  std::string mode = argv[1];
  if (mode == "--list" && argc == 2) {
    for (const auto &v : config_vars())
      std::cout << v.name << " " << config_kind_name(v.kind) << " "
                << default_text(v) << "\n";
    return 0;
  }
  if ((mode != "--check" && mode != "--write") || argc != 3)
    return usage();
  std::string path = argv[2], page;
  size_t begin, end;
  if (!read(path, page)) {
    std::cerr << path << ": cannot read\n";
    return 1;
  }
  if (!find_list(page, begin, end)) {
    std::cerr << path
              << ": no generated config list (its marker comments "
                 "are missing)\n";
    return 1;
  }
  const std::string list = man_list();
  if (mode == "--check") {
    if (page.compare(begin, end - begin, list) == 0)
      return 0;
    std::cerr << path
              << ": the config list is not the table's "
                 "(runtime/config/config.def); run `ninja -C build "
                 "man-config`. The table's list:\n"
              << list;
    return 1;
  }
  page.replace(begin, end - begin, list);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << page;
  if (!out) {
    std::cerr << path << ": cannot write\n";
    return 1;
  }
  return 0;
}
