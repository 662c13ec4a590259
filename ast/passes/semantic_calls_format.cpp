// Semantic analysis of the functions that format their arguments: printf,
// debugf, errorf, warnf, system and cat.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"

#include <cctype>
#include <cstring>

namespace ubtrace::ast {

namespace {

// The widest field width or precision a format may ask for.
constexpr unsigned long kMaxPrintfWidth = 65535;

} // namespace

// printf-style format strings: each conversion against its argument.
void Semantic::check_format(Call &c) {
  if (!check_arity(c))
    return;
  std::string fmt;
  if (!expect_string_literal(c, 0, fmt))
    return;
  struct Conv {
    std::string text;
    char conv;
  };
  std::vector<Conv> convs;
  for (size_t i = 0; i < fmt.size(); i++) {
    if (fmt[i] != '%')
      continue;
    size_t start = i++;
    if (i < fmt.size() && fmt[i] == '%')
      continue;
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]))
      i++;
    // Field width and precision: bounded, so that a typo cannot make every
    // event print megabytes of padding.
    auto number = [&](const char *what) {
      size_t from = i;
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
        i++;
      if (i - from > 5 || (i > from && std::stoul(fmt.substr(from, i - from)) >
                                           kMaxPrintfWidth)) {
        err(c.loc) << c.name << ": " << fmt.substr(from, i - from)
                   << " is not a valid " << what << " in '"
                   << fmt.substr(start, i - start) << "', allowed range: [0,"
                   << kMaxPrintfWidth << "]";
        return false;
      }
      return true;
    };
    if (!number("field width"))
      return;
    if (i < fmt.size() && fmt[i] == '.') {
      i++;
      if (!number("precision"))
        return;
    }
    while (i < fmt.size() && std::strchr("hlLqjzt", fmt[i]))
      i++;
    if (i >= fmt.size()) {
      err(c.loc) << c.name << ": incomplete format specifier at the end of '"
                 << fmt << "'";
      return;
    }
    char conv = fmt[i];
    // %r, %rx, %rh print buffers; %gr kernel GFP flags (an integer).
    if (conv == 'r' && i + 1 < fmt.size() &&
        (fmt[i + 1] == 'x' || fmt[i + 1] == 'h'))
      i++;
    if (conv == 'g' && i + 1 < fmt.size() && fmt[i + 1] == 'r') {
      i++;
      conv = 'G'; // stands for %gr below
    } else if (!std::strchr("diuxXocspr", conv)) {
      err(c.loc) << c.name << ": invalid format specifier '"
                 << fmt.substr(start, i - start + 1) << "'"
                 << (std::strchr("eEfFgGaA", conv)
                         ? " (floating point is not supported)"
                         : "");
      return;
    }
    convs.push_back({fmt.substr(start, i - start + 1), conv});
  }
  size_t nargs = c.args.size() - 1;
  if (nargs < convs.size()) {
    err(c.loc) << c.name << ": Not enough arguments for format string ("
               << nargs << " supplied, " << convs.size() << " expected)";
    return;
  }
  if (nargs > convs.size()) {
    err(c.loc) << c.name << ": Too many arguments for format string (" << nargs
               << " supplied, " << convs.size() << " expected)";
    return;
  }
  for (size_t i = 0; i < convs.size(); i++) {
    Expr *arg = c.args[i + 1];
    Type t = decay(arg->type);
    if (t.is_none())
      continue;
    if (t.kind == TypeKind::Void || t.kind == TypeKind::Hist ||
        t.kind == TypeKind::LHist || t.kind == TypeKind::TSeries ||
        t.kind == TypeKind::Stats) {
      err(arg->loc) << c.name << ": can not print a value of type '"
                    << type_str(t) << "'";
      continue;
    }
    switch (convs[i].conv) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
    case 'p':
    case 'G':
      if (!t.is_intlike() && t.kind != TypeKind::Pointer)
        err(c.loc) << c.name << ": " << convs[i].text
                   << " specifier expects a value of type integer ("
                   << kind_name(t) << " supplied)";
      break;
    case 'r':
      if (t.kind != TypeKind::Buffer && t.kind != TypeKind::String &&
          t.kind != TypeKind::Array)
        err(c.loc) << c.name << ": " << convs[i].text
                   << " specifier expects a value of type buffer ("
                   << kind_name(t) << " supplied)";
      break;
    default: // %s prints anything
      break;
    }
  }
}

} // namespace ubtrace::ast
