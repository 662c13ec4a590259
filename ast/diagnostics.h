// User mistakes become diagnostics on a location, printed as bpftrace does:
//
//   FILE:L:C1-C2: ERROR: message
//   <source line>
//        ~~~~~
//   HINT: optional hint
//
// All errors of a run are collected and printed together, errors first.
#pragma once

#include "ast/location.h"

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace ubtrace::ast {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  Location loc;
  std::string message;
  std::vector<std::string> hints;
};

class Diagnostics;

// Streams the message of one diagnostic: diags.error(loc) << "x: " << n;
class DiagBuilder {
public:
  DiagBuilder(Diagnostics &d, size_t index) : diags_(d), index_(index) {}
  DiagBuilder(const DiagBuilder &) = delete;
  ~DiagBuilder();
  template <class T> DiagBuilder &operator<<(const T &v) {
    msg_ << v;
    return *this;
  }
  DiagBuilder &hint(std::string text);

private:
  Diagnostics &diags_;
  size_t index_;
  std::ostringstream msg_;
};

class Diagnostics {
public:
  DiagBuilder error(const Location &loc);
  DiagBuilder warning(const Location &loc);

  bool ok() const { return errors_ == 0; }
  size_t error_count() const { return errors_; }
  const std::vector<Diagnostic> &all() const { return list_; }
  Diagnostic &at(size_t i) { return list_[i]; }

  // Errors first, then warnings; each in the order found.
  void emit(std::ostream &out, bool warnings = true) const;
  std::string str(bool warnings = true) const;

private:
  std::vector<Diagnostic> list_;
  size_t errors_ = 0;
};

void emit_diagnostic(std::ostream &out, const Diagnostic &d);

} // namespace ubtrace::ast
