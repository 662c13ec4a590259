#include "ast/diagnostics.h"

namespace ubtrace::ast {

DiagBuilder::~DiagBuilder() {
  diags_.at(index_).message = msg_.str();
}

DiagBuilder &DiagBuilder::hint(std::string text) {
  diags_.at(index_).hints.push_back(std::move(text));
  return *this;
}

DiagBuilder Diagnostics::error(const Location &loc) {
  list_.push_back(Diagnostic{Severity::Error, loc, {}, {}});
  errors_++;
  return DiagBuilder(*this, list_.size() - 1);
}

DiagBuilder Diagnostics::warning(const Location &loc) {
  list_.push_back(Diagnostic{Severity::Warning, loc, {}, {}});
  return DiagBuilder(*this, list_.size() - 1);
}

void emit_diagnostic(std::ostream &out, const Diagnostic &d) {
  const char *kind = d.severity == Severity::Error ? "ERROR: " : "WARNING: ";
  // An error without a message and location is its hints alone (getopt's
  // --help).
  if (!d.message.empty() || d.loc.valid()) {
    if (d.loc.valid())
      out << d.loc.str() << ": ";
    out << kind << d.message << "\n";
  }
  for (const auto &line : d.loc.context())
    out << line << "\n";
  // In a macro: each call it was expanded at, innermost first.
  for (const Location *at = d.loc.expanded_from; at; at = at->expanded_from) {
    out << at->str() << ": " << kind << "expanded from\n";
    for (const auto &line : at->context())
      out << line << "\n";
  }
  for (const auto &h : d.hints)
    out << "HINT: " << h << "\n";
}

void Diagnostics::emit(std::ostream &out, bool warnings) const {
  for (const auto &d : list_)
    if (d.severity == Severity::Error)
      emit_diagnostic(out, d);
  if (!warnings)
    return;
  for (const auto &d : list_)
    if (d.severity == Severity::Warning)
      emit_diagnostic(out, d);
}

std::string Diagnostics::str(bool warnings) const {
  std::ostringstream os;
  emit(os, warnings);
  return os.str();
}

} // namespace ubtrace::ast
