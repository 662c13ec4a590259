// The one way backends/ says something to the user about ubtrace itself:
// a problem that stops the trace ("ERROR: text"), one it works around
// ("WARNING: text"), or -v detail ("INFO: text"), a line each on the error
// stream, as bpftrace's users expect them.
//
// Not for what a running trace prints (errorf(), runtime errors, losses,
// the process's end): those go through output::Output, which writes them
// in the chosen format (-f json), nor for the front end's located
// diagnostics (ast::Diagnostics).
#pragma once

#include <ostream>
#include <string_view>

namespace ubtrace::backends {

class Reporter {
public:
  explicit Reporter(std::ostream &err) : err_(&err) {}

  void error(std::string_view text) { line("ERROR: ", text); }
  void warning(std::string_view text) { line("WARNING: ", text); }
  void info(std::string_view text) { line("INFO: ", text); }

  // The stream the lines go to (for text that follows one, e.g. usage).
  std::ostream &stream() { return *err_; }

private:
  void line(std::string_view kind, std::string_view text) {
    // Flushed at once: the traced program writes to the same terminal.
    *err_ << kind << text << std::endl;
  }

  std::ostream *err_;
};

} // namespace ubtrace::backends
