#include "backends/output/pprof.h"

#include "backends/output/symbols_text.h"
#include "backends/output/text_value.h"

#include <algorithm>
#include <limits>
#include <map>
#include <profile.pb.h>
#include <tuple>
#include <zlib.h>

namespace ubtrace::output {
namespace {

namespace pb = perftools::profiles;

bool has_stack(const Value &key) {
  for (const Value *part : key_parts(key))
    if (part->stack)
      return true;
  return false;
}

int64_t sample_value(const Value &v) {
  if (v.kind == Value::Kind::Int)
    return v.sint;
  if (v.kind == Value::Kind::UInt)
    return static_cast<int64_t>(
        std::min<uint64_t>(v.uint, std::numeric_limits<int64_t>::max()));
  return 0;
}

// Builds one Profile: interns strings, functions, mappings and locations
// so that each is written once.
class Builder {
public:
  explicit Builder(Symbolizer *symbolizer) : symbolizer_(symbolizer) {
    profile_.add_string_table(""); // index 0 is always the empty string
  }

  pb::Profile &profile() { return profile_; }

  int64_t str(const std::string &s) {
    auto [it, fresh] = strings_.try_emplace(s, strings_.size() + 1);
    if (fresh)
      profile_.add_string_table(s);
    return it->second;
  }

  // The location of `addr` in process `pid` (kernel: pid -1).
  uint64_t location(uint64_t addr, int64_t pid, bool kernel) {
    auto key = std::make_tuple(kernel, kernel ? -1 : pid, addr);
    if (auto it = locations_.find(key); it != locations_.end())
      return it->second;
    pb::Location *loc = profile_.add_location();
    loc->set_id(static_cast<uint64_t>(profile_.location_size()));
    loc->set_address(addr);
    std::vector<SymbolFrame> frames;
    if (symbolizer_) {
      frames =
          kernel ? symbolizer_->kernel(addr) : symbolizer_->user(addr, pid);
      if (!kernel)
        if (auto m = symbolizer_->mapping(addr, pid))
          loc->set_mapping_id(mapping(*m, frames));
    }
    // Innermost first, the containing function last: pprof's order.
    for (const auto &f : frames) {
      pb::Line *line = loc->add_line();
      line->set_function_id(function(f));
      line->set_line(f.line);
    }
    locations_.emplace(key, loc->id());
    return loc->id();
  }

private:
  uint64_t function(const SymbolFrame &f) {
    auto key = std::make_pair(f.name, f.file);
    if (auto it = functions_.find(key); it != functions_.end())
      return it->second;
    pb::Function *fn = profile_.add_function();
    fn->set_id(static_cast<uint64_t>(profile_.function_size()));
    fn->set_name(str(f.name));
    fn->set_system_name(str(f.name));
    fn->set_filename(str(f.file));
    functions_.emplace(key, fn->id());
    return fn->id();
  }

  uint64_t mapping(const MappingInfo &m,
                   const std::vector<SymbolFrame> &frames) {
    auto key = std::make_tuple(m.path, m.start, m.limit, m.file_offset);
    pb::Mapping *pm = nullptr;
    if (auto it = mappings_.find(key); it != mappings_.end()) {
      pm = profile_.mutable_mapping(static_cast<int>(it->second - 1));
    } else {
      pm = profile_.add_mapping();
      pm->set_id(static_cast<uint64_t>(profile_.mapping_size()));
      pm->set_memory_start(m.start);
      pm->set_memory_limit(m.limit);
      pm->set_file_offset(m.file_offset);
      pm->set_filename(str(m.path));
      pm->set_build_id(str(build_id_text(m.build_id)));
      mappings_.emplace(key, pm->id());
    }
    // What was found for the addresses in it: pprof then does not try
    // to symbolise them again.
    for (const auto &f : frames) {
      pm->set_has_functions(true);
      if (!f.file.empty())
        pm->set_has_filenames(true);
      if (f.line)
        pm->set_has_line_numbers(true);
      if (f.inlined)
        pm->set_has_inline_frames(true);
    }
    return pm->id();
  }

  Symbolizer *symbolizer_;
  pb::Profile profile_;
  std::map<std::string, int64_t> strings_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;
  std::map<std::tuple<std::string, uint64_t, uint64_t, uint64_t>, uint64_t>
      mappings_;
  std::map<std::tuple<bool, int64_t, uint64_t>, uint64_t> locations_;
};

} // namespace

bool is_profile_map(const PrintedMap &map) {
  if (map.shape != PrintedMap::Shape::Plain || map.scalar ||
      map.entries.empty())
    return false;
  return std::all_of(map.entries.begin(), map.entries.end(),
                     [](const PrintedMap::Entry &e) {
                       return e.value.is_integer() && has_stack(e.key);
                     });
}

std::string pprof_profile(const std::vector<const PrintedMap *> &maps,
                          Symbolizer *symbolizer, const ProfileTimes &times) {
  Builder b(symbolizer);
  pb::Profile &p = b.profile();
  std::vector<const PrintedMap *> taken;
  for (const PrintedMap *m : maps)
    if (is_profile_map(*m))
      taken.push_back(m);
  for (const PrintedMap *m : taken) {
    pb::ValueType *t = p.add_sample_type();
    std::string name = m->name.starts_with("@") ? m->name.substr(1) : m->name;
    t->set_type(b.str(name.empty() ? "map" : name));
    t->set_unit(b.str(m->agg == runtime::AggKind::Count ? "count" : ""));
  }
  // Entries of different maps with the same stack and labels share one
  // sample, each map's value in its own column.
  std::map<std::string, pb::Sample *> samples;
  for (size_t i = 0; i < taken.size(); i++) {
    const PrintedMap &m = *taken[i];
    for (const auto &e : m.entries) {
      pb::Sample draft;
      // Key parts print outermost first; the leaf of the last stack is
      // the sample's first location.
      const auto parts = key_parts(e.key);
      const auto names = key_part_names(m, e.key);
      for (size_t k = parts.size(); k-- > 0;) {
        const Value &part = *parts[k];
        if (!part.stack)
          continue;
        for (uint64_t addr : part.addresses)
          draft.add_location_id(
              b.location(addr, part.stack_pid, part.kernel_stack));
      }
      for (size_t k = 0; k < parts.size(); k++) {
        const Value &part = *parts[k];
        if (part.stack)
          continue;
        pb::Label *l = draft.add_label();
        l->set_key(b.str(names[k]));
        if (part.kind == Value::Kind::Int)
          l->set_num(part.sint);
        else if (part.kind == Value::Kind::UInt)
          l->set_num(static_cast<int64_t>(part.uint));
        else
          l->set_str(b.str(text_of(part)));
      }
      std::string identity;
      draft.SerializeToString(&identity);
      pb::Sample *&s = samples[identity];
      if (!s) {
        s = p.add_sample();
        *s = std::move(draft);
        for (size_t j = 0; j < taken.size(); j++)
          s->add_value(0);
      }
      s->set_value(static_cast<int>(i),
                   s->value(static_cast<int>(i)) + sample_value(e.value));
    }
  }
  if (!taken.empty())
    p.set_default_sample_type(p.sample_type(0).type());
  p.set_time_nanos(times.time_nanos);
  p.set_duration_nanos(times.duration_nanos);
  p.add_comment(b.str("generated by ubtrace"));
  std::string out;
  p.SerializeToString(&out);
  return out;
}

std::string gzip(const std::string &data) {
  z_stream z{};
  // 15 window bits + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return {};
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

PprofOutput::PprofOutput(std::string file, std::ostream &out, std::ostream &err,
                         const FormatContext &ctx)
    : SnapshotOutput(std::move(file), out, err), ctx_(ctx),
      start_(std::chrono::system_clock::now()),
      start_mono_(std::chrono::steady_clock::now()) {}

std::string PprofOutput::render(const std::vector<const PrintedMap *> &maps) {
  ProfileTimes times;
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  times.time_nanos =
      duration_cast<nanoseconds>(start_.time_since_epoch()).count();
  times.duration_nanos =
      duration_cast<nanoseconds>(std::chrono::steady_clock::now() - start_mono_)
          .count();
  return gzip(pprof_profile(maps, ctx_.symbolizer, times));
}

} // namespace ubtrace::output
