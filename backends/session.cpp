#include "backends/session.h"

#include "backends/backend.h"
#include "backends/cli/cli_backend.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/loss_report.h"
#include "backends/metrics_server.h"
#include "backends/output/decode.h"
#include "backends/output/formats.h"
#include "backends/output/host_system.h"
#include "backends/output/merge.h"
#include "backends/output/printed_map.h"
#include "backends/output/printf_format.h"
#include "backends/output/prometheus.h"
#include "backends/output/text_output.h"
#include "backends/output/time_format.h"
#include "backends/program_set.h"
#include "backends/reporter.h"
#include "backends/user_symbols.h"
#include "backends/userspace/userspace_backend.h"
#include "runtime/abi.h"
#include "runtime/maps/helper_table.h"
#include "runtime/maps/layout.h"
#include "runtime/maps/map_reader.h"
#include "runtime/maps/ring_consumer.h"
#include "runtime/maps/spec_layout.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <linux/bpf.h>
#include <set>
#include <sstream>
#include <thread>

namespace ubtrace::backends {

std::atomic<bool> g_stop_requested{false};
std::atomic<uint64_t> g_sigusr1_count{0};

namespace {

// The places a run-time message names, as the output takes them.
std::vector<output::SourceLocation>
source_chain(const std::vector<runtime::SourceSite> &sites) {
  std::vector<output::SourceLocation> out;
  for (const auto &s : sites)
    out.push_back({s.filename, s.line, s.column, s.location, s.context});
  return out;
}

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

class Session final : public BackendHost {
public:
  Session(const runtime::Bundle &bundle, const SessionOptions &opts)
      : bundle_(bundle), opts_(opts), report_(*opts.err) {}

  int run();

  // BackendHost: what the backends ask of the session.
  void drain_events() override { drain(); }
  bool exiting() const override { return exit_; }
  void sync_maps() override;
  void runtime_error(const std::string &text) override {
    print_runtime_error(text, {});
  }
  void discard_events() override {
    consumer_->drain([](std::span<const uint8_t>) { return true; });
  }
  void set_exit_code(int code) override { exit_code_ = code; }
  void benchmark_result(const std::vector<std::string> &names, size_t index,
                        uint64_t average_ns, uint64_t iters) override {
    out_->benchmark_result(names, index, average_ns, iters);
    opts_.out->flush();
  }
  void begin_capture() override;
  Captured end_capture() override;
  void test_result(const std::vector<std::string> &names, size_t index,
                   uint64_t duration_ns, const std::vector<bool> &passed,
                   const std::string &output) override {
    out_->test_result(names, index, duration_ns, passed, output);
    opts_.out->flush();
  }

private:
  const runtime::Bundle &bundle_;
  SessionOptions opts_;
  Reporter report_; // the CLI's own errors and warnings
  std::unique_ptr<output::Output> out_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<runtime::maps::Region> region_;
  std::unique_ptr<ProgramSet> programs_;
  std::unique_ptr<runtime::maps::RingConsumer> consumer_;
  // The backends that run the probes, in their order (backend.h); the
  // user-space one, when there is a traced process, also as itself.
  std::vector<std::unique_ptr<Backend>> backends_;
  UserspaceBackend *user_ = nullptr;
  abi::Globals *globals_ = nullptr;
  output::HostSystemInfo system_;
  std::unique_ptr<UserSymbols> symbols_;
  output::FormatContext fmt_;
  std::vector<std::string> probe_names_;
  // `probe` as a string: names of ids below this are in the probe-names
  // map (abi::kProbeNamesMap), written as the backends give ids out.
  size_t names_published_ = 0;
  void publish_probe_names();
  // The last printf()/time() text did not end its line; a flush held back
  // for it (see the event loop).
  bool line_open_ = false;
  bool flush_held_ = false;
  // Text printed as is (printf, time, system, cat): whether it left its
  // last line open.
  void note_line_end(std::string_view text) {
    if (!text.empty())
      line_open_ = text.back() != '\n';
  }
  std::vector<output::ParsedFormat> printf_, system_fmt_, cat_;
  bool exit_ = false;
  int exit_code_ = 0;
  // Errors printed (errorf(), failed helpers, runtime errors): what a test
  // probe's verdict counts.
  uint64_t errors_ = 0;
  void print_runtime_error(std::string_view message,
                           std::span<const output::SourceLocation> chain) {
    errors_++;
    out_->runtime_error(message, chain);
  }
  void print_diagnostic(output::Severity severity, std::string_view message,
                        std::span<const output::SourceLocation> chain) {
    errors_ += severity == output::Severity::Error;
    out_->diagnostic(severity, message, chain);
  }
  // --test: the output a test probe's run goes to, and what it replaced.
  std::ostringstream captured_;
  std::unique_ptr<output::Output> held_out_;
  int held_exit_code_ = 0;
  // Scalar per-slot arrays zero()ed since their last clear(): their zeros
  // are values to print, not "never set".
  std::set<size_t> zeroed_;
  const runtime::Config &config_ = bundle_.config;

  Result<void> setup();
  Result<void> attach(size_t &attached);
  void drain();
  bool handle_event(std::span<const uint8_t> rec);
  // `asked`: print(@m) rather than the maps at exit; a scalar map with no
  // value yet then prints its type's zero, as bpftrace's does.
  output::PrintedMap printed(size_t map, size_t top, uint32_t div,
                             bool asked = false);
  void print_all_maps();
  // The exposition of every user map, read now (--metrics).
  std::string metrics_text(output::Exposition dialect);
  void report_losses();
  // How the last traced process ended, when it ended the trace
  // (process_end.h); said after the end probes.
  std::optional<ProcessEnd> target_end_;
  // Says what happened to the traced processes; true when the last one is
  // done, which ends the trace (as with bpftrace -c and -p).
  bool target_news();
};

void Session::begin_capture() {
  drain(); // what came before is not the test's
  // Held as text whatever the format, as bpftrace holds it.
  const output::OutputFormat *format = output::find_output_format("text");
  captured_.str("");
  held_out_ = std::move(out_);
  out_ = format->make({"", captured_, captured_, fmt_});
  held_exit_code_ = exit_code_;
  exit_code_ = 0;
  errors_ = 0;
  exit_ = false;
}

Captured Session::end_capture() {
  Captured got{captured_.str(), errors_, exit_ ? exit_code_ : 0};
  out_ = std::move(held_out_);
  exit_code_ = held_exit_code_;
  exit_ = false; // exit() ended only the test
  return got;
}

// Maps the backends keep elsewhere (the GPU's device copies) copied into
// the region, before they print.
void Session::sync_maps() {
  for (auto &b : backends_)
    if (auto ok = b->sync_maps(); !ok)
      print_runtime_error(ok.error(), {});
}

Result<void> Session::setup() {
  // Options were checked against the table; text is the fallback.
  const output::OutputFormat *format =
      output::find_output_format(opts_.output_format);
  if (!format)
    format = output::find_output_format("text");
  out_ = format->make({opts_.whole_file, *opts_.out, *opts_.err, fmt_});

  auto layouts = runtime::maps::layouts_for(bundle_.maps);
  if (!layouts)
    return make_error("cannot lay out the maps: " + layouts.error());
  auto region = runtime::maps::Region::create(*layouts);
  if (!region)
    return make_error("cannot create the maps: " + region.error());
  region_ = std::make_unique<runtime::maps::Region>(std::move(*region));

  // Globals the programs read (elapsed, slot count, cpid).
  for (size_t i = 0; i < bundle_.maps.size(); i++) {
    if (bundle_.maps[i].role != runtime::MapRole::Globals)
      continue;
    auto *g = static_cast<abi::Globals *>(runtime::maps::array_value_base(
        region_->map(static_cast<uint32_t>(i))));
    if (g) {
      g->start_ns = now_ns();
      timespec real{};
      clock_gettime(CLOCK_REALTIME, &real);
      g->realtime_offset_ns =
          static_cast<uint64_t>(real.tv_sec) * 1000000000ull +
          static_cast<uint64_t>(real.tv_nsec) - g->start_ns;
      g->ncpus = region_->thread_slots();
      g->cpid = 0;
      globals_ = g;
    }
  }
  for (size_t i = 0; i < bundle_.maps.size(); i++)
    if (bundle_.maps[i].role == runtime::MapRole::Events)
      consumer_ = std::make_unique<runtime::maps::RingConsumer>(
          region_->map(static_cast<uint32_t>(i)));
  if (!consumer_)
    return make_error("BUG: the bundle has no events ring buffer");

  auto programs = ProgramSet::load(bundle_, *region_);
  if (!programs)
    return std::move(programs).take_error();
  programs_ = std::make_unique<ProgramSet>(std::move(*programs));

  for (const auto &p : bundle_.probes)
    probe_names_.push_back(p.name);
  for (const auto &f : bundle_.printf_formats)
    printf_.push_back(output::ParsedFormat::parse(f.format));
  for (const auto &f : bundle_.system_formats)
    system_fmt_.push_back(output::ParsedFormat::parse(f.format));
  for (const auto &f : bundle_.cat_formats)
    cat_.push_back(output::ParsedFormat::parse(f.format));
  runtime::symbols::SymbolizerOptions so;
  so.demangle = config_.cpp_demangle;
  so.source_lines = config_.show_debug_info;
  symbols_ = std::make_unique<UserSymbols>(so);
  fmt_.symbolizer = symbols_.get();
  fmt_.show_debug_info = so.source_lines;
  fmt_.system = &system_;
  fmt_.probe_names = &probe_names_;
  fmt_.strftime_formats = &bundle_.time_formats;
  fmt_.max_strlen = config_.max_strlen;
  fmt_.str_trunc_trailer = config_.str_trunc_trailer;
  // strftime() gets monotonic nanoseconds; wall clock = monotonic + offset.
  {
    struct timespec real, mono;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    fmt_.timestamp_offset_ns =
        (int64_t(real.tv_sec) - mono.tv_sec) * 1000000000ll +
        (int64_t(real.tv_nsec) - mono.tv_nsec);
  }
  return {};
}

void Session::drain() {
  size_t n = consumer_->drain(
      [this](std::span<const uint8_t> rec) { return handle_event(rec); });
  // Events print before whatever the traced program writes next.
  if (n)
    opts_.out->flush();
}

bool Session::handle_event(std::span<const uint8_t> rec) {
  if (rec.size() < sizeof(abi::EventHeader))
    return true;
  abi::EventHeader h;
  std::memcpy(&h, rec.data(), sizeof h);
  output::Bytes payload = rec.subspan(sizeof h);
  auto u64_at = [&](size_t off) {
    uint64_t v = 0;
    if (off + 8 <= payload.size())
      std::memcpy(&v, payload.data() + off, 8);
    return v;
  };
  switch (static_cast<abi::EventType>(h.type)) {
  case abi::EventType::Printf:
    if (h.id < printf_.size()) {
      std::string text =
          printf_[h.id].format(bundle_.printf_formats[h.id], payload, fmt_);
      note_line_end(text);
      out_->printf(text);
    }
    return true;
  case abi::EventType::Errorf:
  case abi::EventType::Warnf: {
    if (h.id >= printf_.size())
      return true;
    // --no-warnings silences the script's warnf(); losses are still
    // reported (they say what the output lacks, not what the script did).
    if (opts_.no_warnings &&
        static_cast<abi::EventType>(h.type) == abi::EventType::Warnf)
      return true;
    const auto &spec = bundle_.printf_formats[h.id];
    print_diagnostic(
        static_cast<abi::EventType>(h.type) == abi::EventType::Errorf
            ? output::Severity::Error
            : output::Severity::Warning,
        printf_[h.id].format(spec, payload, fmt_), source_chain(spec.where));
    return true;
  }
  case abi::EventType::Exit:
    exit_ = true;
    exit_code_ = static_cast<int>(h.id);
    return true;
  case abi::EventType::PrintMap:
    if (h.id < bundle_.maps.size()) {
      sync_maps();
      out_->map(
          printed(h.id, u64_at(0), static_cast<uint32_t>(u64_at(8)), true));
    }
    return true;
  case abi::EventType::ClearMap:
    if (h.id < bundle_.maps.size()) {
      for (auto &b : backends_)
        b->clear_map(static_cast<uint32_t>(h.id), false);
      runtime::maps::clear_map(region_->map(static_cast<uint32_t>(h.id)));
      zeroed_.erase(h.id);
    }
    return true;
  case abi::EventType::ZeroMap:
    if (h.id < bundle_.maps.size()) {
      for (auto &b : backends_)
        b->clear_map(static_cast<uint32_t>(h.id), true);
      runtime::maps::zero_map(region_->map(static_cast<uint32_t>(h.id)));
      zeroed_.insert(h.id);
    }
    return true;
  case abi::EventType::Time: {
    if (h.id >= bundle_.time_formats.size())
      return true;
    auto text =
        output::format_time(bundle_.time_formats[h.id], std::time(nullptr));
    if (text) {
      note_line_end(*text);
      out_->time(*text);
    } else
      print_runtime_error("time(): " + text.error(), {});
    return true;
  }
  case abi::EventType::PrintValue:
    if (h.id < bundle_.print_types.size())
      out_->value(output::decode(bundle_.print_types[h.id], payload, fmt_));
    return true;
  case abi::EventType::Join: {
    if (h.id >= bundle_.join_separators.size())
      return true;
    uint64_t n = u64_at(0);
    std::string text;
    for (uint64_t i = 0; i < n && i < abi::kJoinMaxArgs; i++) {
      size_t off = 8 + i * config_.max_strlen;
      if (off >= payload.size())
        break;
      const char *s = reinterpret_cast<const char *>(payload.data() + off);
      if (i)
        text += bundle_.join_separators[h.id];
      text +=
          std::string(s, strnlen(s, std::min<size_t>(config_.max_strlen,
                                                     payload.size() - off)));
    }
    out_->join(text);
    return true;
  }
  case abi::EventType::System: {
    if (h.id >= system_fmt_.size() || !opts_.unsafe)
      return true;
    std::string cmd =
        system_fmt_[h.id].format(bundle_.system_formats[h.id], payload, fmt_);
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) {
      print_runtime_error("system(): cannot run " + cmd, {});
      return true;
    }
    std::string result;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
      result.append(buf, n);
    pclose(p);
    note_line_end(result);
    out_->syscall(result);
    return true;
  }
  case abi::EventType::Cat: {
    if (h.id >= cat_.size())
      return true;
    std::string path =
        cat_[h.id].format(bundle_.cat_formats[h.id], payload, fmt_);
    std::ifstream f(path, std::ios::binary);
    if (!f) {
      // An error, as bpftrace says it; the trace goes on.
      print_diagnostic(output::Severity::Error,
                       "failed to open file '" + path + "' (" +
                           std::strerror(errno) + ")",
                       {});
      return true;
    }
    std::string text(config_.max_cat_bytes, '\0');
    f.read(text.data(), static_cast<std::streamsize>(config_.max_cat_bytes));
    text.resize(static_cast<size_t>(f.gcount()));
    note_line_end(text);
    out_->cat(text);
    return true;
  }
  case abi::EventType::Signal:
    return true;
  case abi::EventType::HelperError: {
    if (h.id >= bundle_.helper_checks.size())
      return true;
    const auto &check = bundle_.helper_checks[h.id];
    int retcode = static_cast<int>(static_cast<int64_t>(u64_at(0)));
    // bpftrace's words: a missing element, or the errno's text.
    std::string message =
        check.helper == BPF_FUNC_map_lookup_elem
            ? "Can't lookup map element because it does not exist."
            : std::strerror(-retcode);
    errors_++;
    out_->helper_error(message, check.name, retcode, source_chain(check.where));
    return true;
  }
  }
  return true;
}

output::PrintedMap Session::printed(size_t map, size_t top, uint32_t div,
                                    bool asked) {
  const auto &spec = bundle_.maps[map];
  auto snap = runtime::maps::snapshot(region_->map(static_cast<uint32_t>(map)));
  bool scalar = spec.key.kind == runtime::ValueType::Kind::None;
  std::vector<std::vector<uint8_t>> merged;
  merged.reserve(snap.entries);
  std::vector<output::MapEntry> entries;
  // No slot in use yet (no probe ran): every entry's values are zero.
  const size_t slots = snap.info.slots;
  const std::vector<uint8_t> none(snap.info.value_size, 0);
  for (size_t i = 0; i < snap.entries; i++) {
    output::Bytes all =
        slots ? output::Bytes(snap.values.data() +
                                  i * slots * snap.info.value_size,
                              slots * snap.info.value_size)
              : output::Bytes(none.data(), none.size());
    merged.push_back(output::merge_slots(spec, all, slots ? slots : 1));
  }
  // A scalar aggregation in a per-slot array exists before its first
  // update: it reads as unset until then and does not print.
  auto unset = [&](const std::vector<uint8_t> &v) {
    if (spec.kind != runtime::MapKind::PerCpuArray || zeroed_.count(map))
      return false;
    auto word = [&](size_t i) {
      uint64_t w = 0;
      if (v.size() >= 8 * (i + 1))
        std::memcpy(&w, v.data() + 8 * i, 8);
      return w;
    };
    switch (spec.agg) {
    case runtime::AggKind::Count:
      return word(0) == 0;
    case runtime::AggKind::Min:
    case runtime::AggKind::Max:
    case runtime::AggKind::Avg:
    case runtime::AggKind::Stats:
      return word(1) == 0; // is_set / count
    case runtime::AggKind::Hist:
    case runtime::AggKind::LHist:
    case runtime::AggKind::TSeries:
      return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
    case runtime::AggKind::Sum:
    case runtime::AggKind::None:
      return false;
    }
    return false;
  };
  for (size_t i = 0; i < snap.entries; i++)
    if (!unset(merged[i]))
      entries.push_back({scalar ? output::Bytes{} : snap.key(i), merged[i]});
  if (asked && scalar && entries.empty())
    entries.push_back(
        {output::Bytes{}, output::Bytes(none.data(), none.size())});
  return output::build_printed_map(spec, std::move(entries), fmt_, top, div);
}

std::string Session::metrics_text(output::Exposition dialect) {
  std::vector<output::PrintedMap> maps;
  for (size_t i = 0; i < bundle_.maps.size(); i++)
    if (bundle_.maps[i].role == runtime::MapRole::User)
      maps.push_back(printed(i, 0, 0));
  std::vector<const output::PrintedMap *> ptrs;
  for (const auto &m : maps)
    ptrs.push_back(&m);
  return output::prometheus_text(ptrs, dialect, &fmt_);
}

void Session::print_all_maps() {
  std::vector<output::PrintedMap> maps;
  for (size_t i = 0; i < bundle_.maps.size(); i++) {
    if (bundle_.maps[i].role != runtime::MapRole::User)
      continue;
    auto m = printed(i, 0, 0);
    if (!m.entries.empty())
      maps.push_back(std::move(m));
  }
  output::print_maps_at_exit(*out_, std::move(maps));
}

void Session::report_losses() {
  auto stats = consumer_->stats();
  if (stats.counters_overwritten)
    print_runtime_error("the traced process wrote over the event ring's loss "
                        "counters: how many events were lost is unknown",
                        {});
  else if (stats.lost)
    out_->lost_events(stats.lost);
  // Everything else lost on the way, in the agent or in the region.
  agent::NamedValues counters;
  for (const auto &b : backends_) {
    auto lost = b->losses();
    counters.insert(counters.end(), lost.begin(), lost.end());
  }
  counters.emplace_back(kRegionSlotExhausted, region_->slot_exhausted());
  counters.emplace_back(kRegionSlotRawChildren, region_->slot_raw_children());
  counters.emplace_back(kRingDeadWriters, stats.dead_writer_skips);
  counters.emplace_back(kRingStalledWriters, stats.abandoned);
  for (const auto &lost : describe_losses(counters, {region_->thread_slots()}))
    out_->lost_hits(lost);
  for (size_t i = 0; i < bundle_.maps.size(); i++) {
    if (bundle_.maps[i].role != runtime::MapRole::User)
      continue;
    auto c =
        runtime::maps::map_counters(region_->map(static_cast<uint32_t>(i)));
    if (c.overwritten)
      continue;
    if (c.undone)
      print_runtime_error("map " + bundle_.maps[i].name + " lost " +
                              std::to_string(c.undone) +
                              " update(s): the thread making the key died or "
                              "left its probe halfway, and the insert was "
                              "undone",
                          {});
    if (!c.drops)
      continue;
    // The lock's and the slots' drops are parts of drops; the rest found the
    // map full. The counters live in memory the process can write: clamp.
    const uint64_t locked = std::min(c.lock_drops, c.drops);
    const uint64_t no_slot = std::min(c.slot_drops, c.drops - locked);
    const uint64_t full = c.drops - locked - no_slot;
    const std::string &name = bundle_.maps[i].name;
    if (full)
      print_runtime_error("Map full; can't update element: map " + name +
                              " dropped " + std::to_string(full) +
                              " update(s) (raise max_map_keys or declare it "
                              "with a larger size)",
                          {});
    if (locked)
      print_runtime_error("map " + name + " dropped " + std::to_string(locked) +
                              " update(s) that could not take its insert "
                              "lock (the holder was stopped or never let go)",
                          {});
    if (no_slot)
      print_runtime_error("map " + name + " dropped " +
                              std::to_string(no_slot) +
                              " update(s) of threads that found no free "
                              "thread slot",
                          {});
  }
  // What the traced process wrote over in the shared region (it can: the
  // region is mapped writable in it), and what the CLI found that makes no
  // sense: nothing was trusted, but what was read may be wrong.
  auto &trusted = region_->trusted();
  (void)runtime::maps::check_headers(trusted);
  if (uint32_t kinds = trusted.anomaly_kinds.load())
    print_runtime_error(
        "the traced process wrote over ubtrace's shared memory (" +
            runtime::maps::describe_anomalies(kinds) +
            "): the maps and events printed may be wrong or incomplete",
        {});
}

// The selector's choice (backend_for) made real: a backend for each kind
// of probe the bundle has, in the order of backend.h, each attached before
// the next is made (the GPU's needs the traced process). A traced process
// (-c, -p) has its user-space backend even without user-space probes.
Result<void> Session::attach(size_t &attached) {
  size_t probes[std::size(kBackendKinds)] = {};
  for (const auto &p : bundle_.probes)
    probes[static_cast<size_t>(backend_for(p.kind))]++;
  UserspaceBackendOptions user;
  user.command = opts_.command;
  user.pids = opts_.pids;
  user.follow = opts_.follow;
  user.verbose = opts_.verbose;
  user.host = this;
  // User-space probes with no process named run system-wide.
  user.system_wide = opts_.command.empty() && opts_.pids.empty() &&
                     probes[size_t(BackendKind::Userspace)] > 0;
  if (probes[size_t(BackendKind::Userspace)])
    if (auto ok = UserspaceBackend::check(bundle_, user); !ok)
      return ok;
  if (probes[size_t(BackendKind::Gpu)])
    if (auto ok = gpu::GpuBackend::check(opts_.command); !ok)
      return ok;
  auto add = [&](std::unique_ptr<Backend> b) -> Result<void> {
    auto n = b->attach();
    if (!n)
      return std::move(n).take_error();
    attached += *n;
    b->prepare_printer(fmt_);
    backends_.push_back(std::move(b));
    return {};
  };
  CliMode mode = opts_.test    ? CliMode::Test
                 : opts_.bench ? CliMode::Bench
                               : CliMode::Run;
  if (auto ok =
          add(std::make_unique<CliBackend>(bundle_, *programs_, *this, mode));
      !ok)
    return ok;
  if (opts_.command.empty() && opts_.pids.empty() && !user.system_wide)
    return {};
  auto u = UserspaceBackend::create(bundle_, *programs_, *region_, globals_,
                                    probe_names_, *symbols_, report_, user);
  if (!u)
    return std::move(u).take_error();
  user_ = u->get();
  if (auto ok = add(std::move(*u)); !ok)
    return ok;
  if (!probes[size_t(BackendKind::Gpu)])
    return {};
  // probe_names_ gains the expanded names of wildcard GPU attach points.
  gpu::GpuBackendOptions gpu_options;
  gpu_options.probe_names = &probe_names_;
  gpu_options.notice = [this](const std::string &t) {
    report_.warning("GPU: " + t);
  };
  gpu_options.hand_channel = [this](int fd) {
    return user_->pass_gpu_channel(fd);
  };
  auto g = gpu::GpuBackend::create(bundle_, user_->pid(), gpu_options);
  if (!g)
    return std::move(g).take_error();
  return add(std::move(*g));
}

bool Session::target_news() {
  bool attached = !opts_.pids.empty();
  for (auto &n : user_->news()) {
    if (n.kind == TargetNews::Kind::AgentGone) {
      print_runtime_error(
          agent_gone_text(n.pid, n.comm, n.reason, attached && n.last), {});
    } else if (n.last) {
      drain();
      target_end_ = n.end;
    } else if (auto said =
                   exit_record(*n.end, attached, g_stop_requested.load())) {
      // One of several: said now, after what its probes printed.
      drain();
      out_->process_exit(*said);
      opts_.out->flush();
    }
  }
  return user_->done();
}

void Session::publish_probe_names() {
  for (size_t i = 0; i < bundle_.maps.size(); i++) {
    if (bundle_.maps[i].role != runtime::MapRole::ProbeNames)
      continue;
    void *map = region_->map(static_cast<uint32_t>(i));
    for (; names_published_ < probe_names_.size(); names_published_++) {
      auto *slot = static_cast<char *>(runtime::maps::array_value(
          map, static_cast<uint32_t>(names_published_)));
      if (!slot)
        break; // past the table: those read "" (abi::kProbeNamesMax)
      const std::string &name = probe_names_[names_published_];
      size_t n = std::min<size_t>(name.size(), abi::kProbeNameSize - 1);
      std::memcpy(slot, name.data(), n);
      std::memset(slot + n, 0, abi::kProbeNameSize - n);
    }
  }
}

int Session::run() {
  auto ok = setup();
  if (!ok) {
    report_.error(ok.error());
    return 1;
  }
  if (!opts_.metrics_listen.empty()) {
    auto server = MetricsServer::listen(opts_.metrics_listen);
    if (!server) {
      report_.error(server.error());
      return 1;
    }
    metrics_ = std::move(*server);
    if (!opts_.quiet)
      report_.info("serving the maps as Prometheus metrics on http://" +
                   metrics_->where() + "/metrics");
  }
  size_t attached = 0;
  if (auto ok = attach(attached); !ok) {
    report_.error(ok.error());
    return 1;
  }
  publish_probe_names();
  if (!opts_.quiet) {
    out_->attached_probes(attached);
    opts_.out->flush(); // -f json: a reader waiting for it sees it now
  }

  // The begin probes run; a command starts running.
  for (auto &b : backends_)
    if (auto started = b->start(); !started)
      report_.error(started.error());
  // With nothing but begin and end probes there is nothing to wait for:
  // the trace ends after begin, as in bpftrace.
  if (std::none_of(backends_.begin(), backends_.end(),
                   [](const auto &b) { return b->fires_later(); }))
    exit_ = true;
  while (!exit_ && !g_stop_requested.load()) {
    uint64_t now = now_ns();
    // Wake at least every 100 ms for signals, and as often as a backend
    // asks to be serviced.
    uint64_t wait = 100000000;
    for (auto &b : backends_)
      wait = std::min(wait, b->service_period_ns());
    // Probes on a timer (interval).
    for (auto &b : backends_) {
      wait = std::min(wait, b->fire_due(now));
      if (exit_)
        break;
    }
    if (exit_)
      break;
    bool printed = consumer_->poll(
        [this](std::span<const uint8_t> rec) { return handle_event(rec); },
        wait);
    // A line left open (time() then printf(), two events) waits one round
    // for its end, so the traced program's output cannot land inside it.
    if (printed && line_open_ && !flush_held_) {
      flush_held_ = true;
    } else if (printed || flush_held_) {
      opts_.out->flush();
      flush_held_ = false;
    }
    // What the traced process and its agent sent: libraries it loaded get
    // their probes hooked; its first CUDA code load asks for GPU probes.
    for (auto &b : backends_)
      if (auto more = b->service(); !more)
        print_runtime_error(more.error(), {});
    publish_probe_names();
    if (metrics_)
      metrics_->service(
          [this](output::Exposition d) { return metrics_text(d); });
    if (user_ && target_news())
      break;
  }
  // A trace ending before the target: copy the maps kept elsewhere (the
  // GPU's) now. (A target that exited read them back in its exit hooks.)
  if (user_ && !target_end_)
    sync_maps();
  // The backends stop in reverse order: the GPU's last notices, the
  // process unhooked, then the end probes.
  for (auto it = backends_.rbegin(); it != backends_.rend(); ++it)
    (*it)->detach();
  drain();
  if (target_end_)
    if (auto said = exit_record(*target_end_, !opts_.pids.empty(),
                                g_stop_requested.load()))
      out_->process_exit(*said);
  report_losses();
  if (config_.print_maps_on_exit)
    print_all_maps();
  else
    out_->end();
  opts_.out->flush();
  return exit_code_;
}

} // namespace

int run_session(const runtime::Bundle &bundle, const SessionOptions &opts) {
  Session s(bundle, opts);
  return s.run();
}

} // namespace ubtrace::backends
