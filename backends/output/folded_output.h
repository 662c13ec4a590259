// `-f folded`: maps as folded stacks for flame graphs, one line per entry,
//
//   frame;frame;frame count
//
// outermost frame first, as flamegraph.pl, inferno and speedscope read them.
// A map prints this way when its values are plain integers (count(), sum(),
// min(), max(), integer assignments). Each part of the key gives frames in
// key order: a stack (ustack, kstack) gives its frames outermost first, with
// the "+offset" and "@file:line" suffixes dropped so that samples anywhere
// in a function merge; any other value gives one frame, its text form.
// Entries whose frames become equal are summed; lines are sorted.
//
// Everything that is not a foldable map (printf, time, hist/stats maps,
// errors, "Attached N probes") goes to the error stream as text output
// writes it, so that the result stream holds nothing but folded lines.
#pragma once

#include "backends/output/context.h"
#include "backends/output/output.h"
#include "backends/output/text_output.h"

#include <ostream>
#include <string>
#include <vector>

namespace ubtrace::output {

class FoldedOutput : public MapsOwnOutput {
public:
  // `ctx` (optional) names stack frames from their addresses.
  FoldedOutput(std::ostream &out, std::ostream &err,
               const FormatContext *ctx = nullptr)
      : MapsOwnOutput(err, err), out_(out), ctx_(ctx) {}

  void map(const PrintedMap &map) override;
  // Text output's two newlines would only separate printf output from the
  // maps; folded output has nothing to separate.
  void end() override { out_.flush(); }

private:
  std::ostream &out_;
  const FormatContext *ctx_;
};

// Whether `map` prints as folded lines (plain integer values).
bool is_foldable(const PrintedMap &map);

// The folded lines of a foldable map, each ending in '\n'. Entries with a
// count of zero or less are left out (a flame graph cannot show them).
std::string folded_text(const PrintedMap &map,
                        const FormatContext *ctx = nullptr);

// The frames one key contributes, outermost first (a scalar map's key,
// Kind::None, gives none). With a symbolizer in `ctx`, a stack's frames
// come from its addresses: the function names (inlined calls included),
// and an address no symbol covers as its file's name in brackets
// ("[libfoo.so.1]", as pprof names it; its hex address where no file maps
// it), so that samples in one unsymbolised library merge and do not
// depend on where it was loaded. Without one, from the stack's text.
std::vector<std::string> folded_frames(const Value &key,
                                       const FormatContext *ctx = nullptr);

// A stack's frames from its addresses (above), outermost first.
std::vector<std::string> stack_frames(const Value &stack,
                                      const FormatContext &ctx);

// The frames of a stack as stack_text() prints it in any stack mode,
// outermost first, offsets and source lines dropped.
std::vector<std::string> stack_frames(std::string_view stack_text);

} // namespace ubtrace::output
