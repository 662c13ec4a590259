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

#include "runtime/bundle.h"

#include <ostream>
#include <string>
#include <string_view>

namespace ubtrace::backends {

// A message about a place in the script (a probe's attach point), carried
// as an error or warning text: the Reporter prints it as the front end's
// diagnostics are, "stdin:1:5-40: ERROR: text" and the source line.
inline constexpr char kPlaceMark = '\x1f';
inline std::string at_place(const runtime::SourceSite &at,
                            std::string_view text) {
  if (at.location.empty())
    return std::string(text);
  std::string out(1, kPlaceMark);
  out += at.location;
  out += kPlaceMark;
  out += text;
  for (const auto &line : at.context)
    out += "\n" + line;
  return out;
}

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
    if (text.size() > 1 && text[0] == kPlaceMark) {
      size_t end = text.find(kPlaceMark, 1);
      if (end != std::string_view::npos) {
        *err_ << text.substr(1, end - 1) << ": " << kind << text.substr(end + 1)
              << std::endl;
        return;
      }
    }
    *err_ << kind << text << std::endl;
  }

  std::ostream *err_;
};

} // namespace ubtrace::backends
