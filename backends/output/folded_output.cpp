#include "backends/output/folded_output.h"

#include "backends/output/symbols_text.h"
#include "backends/output/text_value.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace ubtrace::output {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isdigit(c);
  });
}

// ';' separates frames and a newline ends the line: neither may appear in a
// frame.
std::string sanitized(std::string_view text) {
  std::string s(text);
  std::replace(s.begin(), s.end(), ';', ':');
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.empty())
    s = "[empty]";
  return s;
}

// One line of stack_text() reduced to the function's name.
std::string frame_name(std::string_view line) {
  const bool perf = line.front() == '\t';
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
    line.remove_prefix(1);
  if (line == "<unwind failure>")
    return "[unknown]";
  if (perf) {
    // "\t7f12ab name+off (module)": the address goes, then the module.
    if (auto space = line.find(' '); space != std::string_view::npos)
      line.remove_prefix(space + 1);
    if (auto open = line.rfind(" (");
        open != std::string_view::npos && !line.empty() && line.back() == ')')
      line = line.substr(0, open);
  }
  constexpr std::string_view inlined = "[inlined] ";
  if (line.substr(0, inlined.size()) == inlined)
    line.remove_prefix(inlined.size());
  // "name+off@file:line" (show_debug_info): the source line goes.
  if (auto at = line.rfind('@'); at != std::string_view::npos) {
    std::string_view where = line.substr(at + 1);
    auto colon = where.rfind(':');
    if (colon != std::string_view::npos && all_digits(where.substr(colon + 1)))
      line = line.substr(0, at);
  }
  if (auto plus = line.rfind('+'); plus != std::string_view::npos && plus > 0 &&
                                   all_digits(line.substr(plus + 1)))
    line = line.substr(0, plus);
  return sanitized(line);
}

void append_frames(const Value &key, const FormatContext *ctx,
                   std::vector<std::string> &frames) {
  switch (key.kind) {
  case Value::Kind::None:
    return;
  case Value::Kind::Tuple:
    for (const auto &e : key.elements)
      append_frames(e, ctx, frames);
    return;
  case Value::Kind::String:
    if (key.stack && ctx && ctx->symbolizer) {
      auto stack = stack_frames(key, *ctx);
      frames.insert(frames.end(), stack.begin(), stack.end());
      return;
    }
    // Stacks are the only strings that print starting with a newline.
    if (!key.text.empty() && key.text.front() == '\n') {
      auto stack = stack_frames(key.text);
      if (stack.empty())
        stack.push_back("[unknown]");
      frames.insert(frames.end(), stack.begin(), stack.end());
      return;
    }
    frames.push_back(sanitized(key.text));
    return;
  case Value::Kind::Bool:
  case Value::Kind::Int:
  case Value::Kind::UInt:
  case Value::Kind::Symbolic:
  case Value::Kind::Buffer:
  case Value::Kind::Array:
  case Value::Kind::Record:
    frames.push_back(sanitized(text_of(key)));
    return;
  }
}

} // namespace

std::vector<std::string> stack_frames(std::string_view stack_text) {
  std::vector<std::string> frames;
  size_t pos = 0;
  while (pos < stack_text.size()) {
    size_t end = stack_text.find('\n', pos);
    if (end == std::string_view::npos)
      end = stack_text.size();
    std::string_view line = stack_text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t") == std::string_view::npos)
      continue;
    frames.push_back(frame_name(line));
  }
  // Stacks print innermost first; flame graphs want the root first.
  std::reverse(frames.begin(), frames.end());
  return frames;
}

std::vector<std::string> stack_frames(const Value &stack,
                                      const FormatContext &ctx) {
  std::vector<std::string> frames; // innermost first, reversed at the end
  for (uint64_t addr : stack.addresses) {
    std::vector<SymbolFrame> syms;
    if (ctx.symbolizer)
      syms = stack.kernel_stack ? ctx.symbolizer->kernel(addr)
                                : ctx.symbolizer->user(addr, stack.stack_pid);
    for (const auto &f : syms)
      frames.push_back(sanitized(f.name));
    if (!syms.empty())
      continue;
    std::optional<MappingInfo> m;
    if (ctx.symbolizer && !stack.kernel_stack)
      m = ctx.symbolizer->mapping(addr, stack.stack_pid);
    if (m && !m->path.empty()) {
      std::string_view path = m->path;
      frames.push_back(
          sanitized("[" + std::string(path.substr(path.rfind('/') + 1)) + "]"));
    } else {
      frames.push_back(pointer_text(addr));
    }
  }
  if (stack.stack_failed || frames.empty())
    frames.push_back("[unknown]");
  std::reverse(frames.begin(), frames.end());
  return frames;
}

std::vector<std::string> folded_frames(const Value &key,
                                       const FormatContext *ctx) {
  std::vector<std::string> frames;
  append_frames(key, ctx, frames);
  return frames;
}

bool is_foldable(const PrintedMap &map) {
  if (map.shape != PrintedMap::Shape::Plain)
    return false;
  return std::all_of(
      map.entries.begin(), map.entries.end(),
      [](const PrintedMap::Entry &e) { return e.value.is_integer(); });
}

std::string folded_text(const PrintedMap &map, const FormatContext *ctx) {
  std::map<std::string, uint64_t> lines;
  for (const auto &e : map.entries) {
    uint64_t count = 0;
    if (e.value.kind == Value::Kind::Int) {
      if (e.value.sint <= 0)
        continue;
      count = static_cast<uint64_t>(e.value.sint);
    } else if (e.value.kind == Value::Kind::UInt) {
      count = e.value.uint;
    }
    if (count == 0)
      continue;
    std::vector<std::string> frames = folded_frames(e.key, ctx);
    if (frames.empty())
      frames.push_back(sanitized(map.name));
    std::string stack;
    for (size_t i = 0; i < frames.size(); i++)
      stack += (i ? ";" : "") + frames[i];
    lines[stack] += count;
  }
  std::string out;
  for (const auto &[stack, count] : lines)
    out += stack + " " + std::to_string(count) + "\n";
  return out;
}

void FoldedOutput::map(const PrintedMap &map) {
  if (!is_foldable(map)) {
    text_.map(map);
    return;
  }
  out_ << folded_text(map, ctx_);
  out_.flush();
}

} // namespace ubtrace::output
