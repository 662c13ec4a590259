#include "ast/passes/metric_annotations.h"

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ast {
namespace {

constexpr std::string_view kDirective = "ubtrace:metric";

struct Annotation {
  std::string map;
  Location map_loc;
  std::vector<std::string> labels;
  std::vector<Location> label_locs;
  bool has_labels = false;
  Location labels_loc;
  std::string help;
};

bool ident_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// Reads one annotation line from `col` (0-based, just past the directive).
class LineReader {
public:
  LineReader(ASTContext &ctx, const SourceFile &file, int line,
             std::string_view text, size_t col)
      : ctx_(ctx), file_(file), line_(line), text_(text), pos_(col) {}

  bool read(Annotation &a) {
    skip_space();
    size_t start = pos_;
    if (!at('@'))
      return fail(start, start + 1,
                  "a metric annotation names a map first: "
                  "`// ubtrace:metric @name ...`");
    pos_++;
    while (pos_ < text_.size() && ident_char(text_[pos_], pos_ == start + 1))
      pos_++;
    a.map = std::string(text_.substr(start, pos_ - start));
    a.map_loc = loc(start, pos_);
    skip_space();
    if (text_.substr(pos_, 7) == "labels(") {
      size_t open = pos_;
      pos_ += 7;
      a.has_labels = true;
      while (true) {
        skip_space();
        size_t s = pos_;
        while (pos_ < text_.size() && ident_char(text_[pos_], pos_ == s))
          pos_++;
        if (pos_ == s)
          return fail(s, s + 1, "a label name was expected here");
        a.labels.emplace_back(text_.substr(s, pos_ - s));
        a.label_locs.push_back(loc(s, pos_));
        skip_space();
        if (at(',')) {
          pos_++;
          continue;
        }
        if (at(')')) {
          pos_++;
          break;
        }
        return fail(pos_, pos_ + 1, "',' or ')' was expected here");
      }
      a.labels_loc = loc(open, pos_);
      skip_space();
    }
    if (at('"')) {
      size_t s = pos_++;
      bool closed = false;
      while (pos_ < text_.size()) {
        char c = text_[pos_++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && pos_ < text_.size()) {
          a.help += text_[pos_++];
          continue;
        }
        a.help += c;
      }
      if (!closed)
        return fail(s, text_.size(), "the help text has no closing '\"'");
      skip_space();
    }
    if (pos_ < text_.size())
      return fail(pos_, text_.size(),
                  "unexpected text in a metric annotation (after the map: "
                  "labels(...) then \"help\")");
    return true;
  }

private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      pos_++;
  }
  Location loc(size_t b, size_t e) const {
    Location l;
    l.file = &file_;
    l.begin = {line_, static_cast<int>(b) + 1};
    l.end = {line_, static_cast<int>(std::max(e, b + 1)) + 1};
    return l;
  }
  bool fail(size_t b, size_t e, const std::string &message) {
    ctx_.diags().error(loc(b, e)) << message;
    return false;
  }

  ASTContext &ctx_;
  const SourceFile &file_;
  int line_;
  std::string_view text_;
  size_t pos_;
};

// How many labels a key takes: one per tuple or record element, else one.
size_t key_arity(const Type &key) {
  if (key.is(TypeKind::Tuple) || key.is(TypeKind::Record))
    return key.fields.size();
  return 1;
}

void check_labels(ASTContext &ctx, const Annotation &a, const MapInfo &info) {
  if (!a.has_labels)
    return;
  if (info.key.is_none()) {
    ctx.diags().error(a.labels_loc)
        << a.map << " has no key: its metric has no labels to name";
    return;
  }
  const size_t want = key_arity(info.key);
  if (a.labels.size() != want) {
    ctx.diags().error(a.labels_loc)
        << a.map << "'s key has " << want << " part" << (want == 1 ? "" : "s")
        << ", so labels() names " << want << ", not " << a.labels.size();
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < a.labels.size(); i++) {
    const std::string &l = a.labels[i];
    if (l.starts_with("__"))
      ctx.diags().error(a.label_locs[i])
          << "label names starting with \"__\" are Prometheus's own";
    else if (l == "le" || l == "quantile")
      ctx.diags().error(a.label_locs[i])
          << "the label \"" << l << "\" is taken by histograms and summaries";
    else if (!seen.insert(l).second)
      ctx.diags().error(a.label_locs[i])
          << "the label \"" << l << "\" is named twice";
  }
}

} // namespace

bool run_metric_annotations(ASTContext &ctx) {
  const SourceFile &file = ctx.source();
  std::set<std::string> annotated;
  for (size_t i = 0; i < file.lines.size(); i++) {
    std::string_view text = file.lines[i];
    size_t p = text.find_first_not_of(" \t");
    if (p == std::string_view::npos || text.substr(p, 2) != "//")
      continue;
    p = text.find_first_not_of(" \t", p + 2);
    if (p == std::string_view::npos ||
        text.substr(p, kDirective.size()) != kDirective)
      continue;
    size_t after = p + kDirective.size();
    if (after < text.size() && text[after] != ' ' && text[after] != '\t')
      continue; // "ubtrace:metrics..." is some other comment
    Annotation a;
    LineReader reader(ctx, file, static_cast<int>(i) + 1, text, after);
    if (!reader.read(a))
      continue;
    auto it = ctx.maps.find(a.map);
    if (it == ctx.maps.end()) {
      ctx.diags().error(a.map_loc) << "the metric annotation names " << a.map
                                   << ", which the script does not use";
      continue;
    }
    if (!annotated.insert(a.map).second) {
      ctx.diags().error(a.map_loc)
          << a.map << " has a metric annotation already";
      continue;
    }
    check_labels(ctx, a, it->second);
    it->second.metric_labels = std::move(a.labels);
    it->second.metric_help = std::move(a.help);
  }
  return true;
}

} // namespace ubtrace::ast
