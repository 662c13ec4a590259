#include "backends/session.h"

#include "backends/gpu/gpu_backend.h" // GPU probes (backends/gpu)
#include "backends/loss_report.h"
#include "backends/output/decode.h"
#include "backends/output/folded_output.h"
#include "backends/output/host_system.h"
#include "backends/output/json_output.h"
#include "backends/output/merge.h"
#include "backends/output/printed_map.h"
#include "backends/output/printf_format.h"
#include "backends/output/text_output.h"
#include "backends/output/time_format.h"
#include "backends/program_set.h"
#include "backends/reporter.h"
#include "backends/user_symbols.h"
#include "backends/userspace/target.h"
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
#include <set>
#include <sstream>
#include <thread>

namespace ubtrace::backends {

std::atomic<bool> g_stop_requested{false};

namespace {

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

class Session {
public:
  Session(const runtime::Bundle &bundle, const SessionOptions &opts)
      : bundle_(bundle), opts_(opts), report_(*opts.err) {}

  int run();

private:
  const runtime::Bundle &bundle_;
  SessionOptions opts_;
  Reporter report_; // the CLI's own errors and warnings
  std::unique_ptr<output::Output> out_;
  std::unique_ptr<runtime::maps::Region> region_;
  std::unique_ptr<ProgramSet> programs_;
  std::unique_ptr<runtime::maps::RingConsumer> consumer_;
  std::unique_ptr<UserspaceTarget> target_;
  std::unique_ptr<gpu::GpuBackend> gpu_; // kernel:/kernelret: probes
  abi::Globals *globals_ = nullptr;
  output::HostSystemInfo system_;
  std::unique_ptr<UserSymbols> symbols_;
  output::FormatContext fmt_;
  std::vector<std::string> probe_names_;
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
  // Scalar per-slot arrays zero()ed since their last clear(): their zeros
  // are values to print, not "never set".
  std::set<size_t> zeroed_;
  const runtime::Config &config_ = bundle_.config;

  Result<void> setup();
  void run_cli_probe(size_t index);
  void drain();
  bool handle_event(std::span<const uint8_t> rec);
  output::PrintedMap printed(size_t map, size_t top, uint32_t div);
  void print_all_maps();
  void report_losses();
  // The traced process's mappings for printing its addresses: looked at
  // again when it reported a library, and every second (libraries it
  // loaded without a probe waiting for them), while it lives.
  uint64_t symbols_refreshed_ns_ = 0;
  void refresh_symbols(bool now);
  // How the traced process ended, when it ended the trace (process_end.h).
  std::optional<ProcessEnd> target_end_;
  bool agent_gone_said_ = false;
  // GPU: device maps copied into the region before they print; notices.
  void gpu_sync();
  void gpu_notice(const std::string &text);
};

void Session::gpu_notice(const std::string &text) {
  report_.warning("GPU: " + text);
}

void Session::gpu_sync() {
  if (!gpu_)
    return;
  auto notice = [this](const std::string &t) { gpu_notice(t); };
  if (auto ok = gpu_->sync(notice); !ok)
    out_->runtime_error("GPU maps were not read back: " + ok.error(), {});
}

Result<void> Session::setup() {
  if (opts_.output_format == "json")
    out_ = std::make_unique<output::JsonOutput>(*opts_.out);
  else if (opts_.output_format == "folded")
    out_ = std::make_unique<output::FoldedOutput>(*opts_.out, *opts_.err);
  else
    out_ = std::make_unique<output::TextOutput>(*opts_.out, *opts_.err);

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

void Session::run_cli_probe(size_t index) {
  const auto &spec = bundle_.probes[index];
  const vm::BoundProgram *prog = programs_->bound(spec.section);
  if (!prog)
    return;
  abi::HostProbeCtx ctx{};
  ctx.probe_id = index;
  vm::RunResult r = vm::run(*prog, &ctx);
  if (r.status != vm::RunStatus::Ok)
    out_->runtime_error(std::string(vm::describe(r.status)) + " in " +
                            spec.name + " at PC " + std::to_string(r.stop_pc),
                        {});
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
    const auto &spec = bundle_.printf_formats[h.id];
    output::SourceLocation where{spec.filename, spec.line, spec.column,
                                 spec.location, spec.context};
    out_->diagnostic(static_cast<abi::EventType>(h.type) ==
                             abi::EventType::Errorf
                         ? output::Severity::Error
                         : output::Severity::Warning,
                     printf_[h.id].format(spec, payload, fmt_),
                     std::span<const output::SourceLocation>(&where, 1));
    return true;
  }
  case abi::EventType::Exit:
    exit_ = true;
    exit_code_ = static_cast<int>(h.id);
    return true;
  case abi::EventType::PrintMap:
    if (h.id < bundle_.maps.size()) {
      gpu_sync();
      out_->map(printed(h.id, u64_at(0), static_cast<uint32_t>(u64_at(8))));
    }
    return true;
  case abi::EventType::ClearMap:
    if (h.id < bundle_.maps.size()) {
      if (gpu_)
        (void)gpu_->clear(static_cast<uint32_t>(h.id), false,
                          [this](const std::string &t) { gpu_notice(t); });
      runtime::maps::clear_map(region_->map(static_cast<uint32_t>(h.id)));
      zeroed_.erase(h.id);
    }
    return true;
  case abi::EventType::ZeroMap:
    if (h.id < bundle_.maps.size()) {
      if (gpu_)
        (void)gpu_->clear(static_cast<uint32_t>(h.id), true,
                          [this](const std::string &t) { gpu_notice(t); });
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
      out_->runtime_error("time(): " + text.error(), {});
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
      out_->runtime_error("system(): cannot run " + cmd, {});
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
      out_->runtime_error(
          "failed to open file '" + path + "': " + std::strerror(errno), {});
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
  }
  return true;
}

output::PrintedMap Session::printed(size_t map, size_t top, uint32_t div) {
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
  return output::build_printed_map(spec, std::move(entries), fmt_, top, div);
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

void Session::refresh_symbols(bool now) {
  uint64_t t = now_ns();
  if (!now && t - symbols_refreshed_ns_ < 1000000000ull)
    return;
  symbols_refreshed_ns_ = t;
  if (!target_end_)
    (void)symbols_->runtime().snapshot(target_->pid());
}

void Session::report_losses() {
  auto stats = consumer_->stats();
  if (stats.counters_overwritten)
    out_->runtime_error("the traced process wrote over the event ring's loss "
                        "counters: how many events were lost is unknown",
                        {});
  else if (stats.lost)
    out_->lost_events(stats.lost);
  // Everything else lost on the way, in the agent or in the region.
  agent::NamedValues counters;
  if (target_)
    counters = target_->agent_counters();
  counters.emplace_back(kRegionSlotExhausted, region_->slot_exhausted());
  counters.emplace_back(kRingDeadWriters, stats.dead_writer_skips);
  counters.emplace_back(kRingStalledWriters, stats.abandoned);
  for (const auto &lost : describe_losses(counters, {region_->thread_slots()}))
    out_->lost_hits(lost);
  for (size_t i = 0; i < bundle_.maps.size(); i++) {
    if (bundle_.maps[i].role != runtime::MapRole::User)
      continue;
    auto c =
        runtime::maps::map_counters(region_->map(static_cast<uint32_t>(i)));
    if (!c.drops || c.overwritten)
      continue;
    // Lock timeouts are part of the drops; the rest found the map full.
    const uint64_t waited = std::min(c.lock_timeouts, c.drops);
    if (c.drops > waited)
      out_->runtime_error(
          "map " + bundle_.maps[i].name + " dropped " +
              std::to_string(c.drops - waited) +
              " update(s): the map was full (raise max_map_keys or "
              "declare it with a larger size)",
          {});
    if (waited)
      out_->runtime_error("map " + bundle_.maps[i].name + " dropped " +
                              std::to_string(waited) +
                              " update(s) that waited too long for its insert "
                              "lock (the holder was stopped or never let go)",
                          {});
  }
  // What the traced process wrote over in the shared region (it can: the
  // region is mapped writable in it), and what the CLI found that makes no
  // sense: nothing was trusted, but what was read may be wrong.
  auto &trusted = region_->trusted();
  (void)runtime::maps::check_headers(trusted);
  if (uint32_t kinds = trusted.anomaly_kinds.load())
    out_->runtime_error(
        "the traced process wrote over ubtrace's shared memory (" +
            runtime::maps::describe_anomalies(kinds) +
            "): the maps and events printed may be wrong or incomplete",
        {});
}

int Session::run() {
  auto ok = setup();
  if (!ok) {
    report_.error(ok.error());
    return 1;
  }
  // The selector: every probe to the backend that runs it.
  struct Interval {
    size_t probe;
    uint64_t period;
    uint64_t next;
  };
  std::vector<size_t> begins, ends;
  std::vector<Interval> intervals;
  size_t attached = 0;
  size_t user_probes = 0;
  size_t gpu_probes = 0;
  for (size_t i = 0; i < bundle_.probes.size(); i++) {
    const auto &p = bundle_.probes[i];
    switch (p.kind) {
    case runtime::ProbeKind::Begin:
      begins.push_back(i);
      break;
    case runtime::ProbeKind::End:
      ends.push_back(i);
      break;
    case runtime::ProbeKind::Interval:
      intervals.push_back({i, std::max<uint64_t>(p.interval_ns, 1000), 0});
      break;
    case runtime::ProbeKind::Uprobe:
    case runtime::ProbeKind::Uretprobe:
    case runtime::ProbeKind::Usdt:
      user_probes++;
      continue;
    case runtime::ProbeKind::GpuKernelEntry:
    case runtime::ProbeKind::GpuKernelExit:
      gpu_probes++; // the GPU backend (backends/gpu)
      continue;
    }
    attached++;
  }
  // The user-space backend: a process with the agent in it.
  if (user_probes && opts_.command.empty() && opts_.pid == 0) {
    report_.error("user-space probes need a process to trace: use -c 'CMD' or "
                  "-p PID (ubtrace traces inside processes, not system-wide)");
    return 1;
  }
  // GPU probes go into CUDA modules as the driver loads them: the process
  // must start under ubtrace.
  if (gpu_probes && opts_.command.empty()) {
    report_.error(
        "GPU probes (kernel:, kernelret:) need a command to trace: use -c "
        "'CMD' (they are injected when the process loads its CUDA modules, "
        "which a running process (-p) has already done)");
    return 1;
  }
  if (!opts_.command.empty() || opts_.pid) {
    auto agent = find_agent_library();
    if (!agent) {
      report_.error(agent.error());
      return 1;
    }
    auto target = opts_.command.empty()
                      ? UserspaceTarget::attach(opts_.pid, *agent)
                      : UserspaceTarget::launch(opts_.command, *agent);
    if (!target) {
      report_.error(target.error());
      return 1;
    }
    target_ = std::move(*target);
    target_->set_warnings(
        [this](const std::string &text) { report_.warning(text); });
    target_->set_snapshot_sink(
        [this](const runtime::symbols::AddressSpace &space) {
          symbols_->runtime().add_snapshot(space);
        });
    if (opts_.verbose)
      target_->set_verbose(
          [this](const std::string &line) { report_.info(line); });
    if (globals_ && !opts_.command.empty())
      globals_->cpid = static_cast<uint64_t>(target_->pid());
    std::vector<std::string> warnings;
    auto hooked =
        target_->install(warnings, bundle_, *programs_, *region_, probe_names_);
    for (const auto &w : warnings)
      report_.warning(w);
    if (!hooked) {
      report_.error(hooked.error());
      return 1;
    }
    if (!target_->jit_error().empty())
      report_.warning("probes run interpreted: " + target_->jit_error());
    // uaddr() symbols, after the Globals in the globals map's value.
    auto addresses = target_->symbol_addresses(bundle_.uaddrs);
    if (!addresses) {
      report_.error(addresses.error());
      return 1;
    }
    if (globals_)
      std::copy(addresses->begin(), addresses->end(),
                reinterpret_cast<uint64_t *>(globals_ + 1));
    // Probes waiting for their library count as attached, as kernel
    // uprobes on a file do.
    attached += *hooked + target_->pending();
    if (gpu_probes) {
      // probe_names_ gains the expanded names of wildcard GPU attach
      // points; the printer learns the kernels' names for func.
      gpu::GpuBackendOptions gpu_options;
      gpu_options.probe_names = &probe_names_;
      auto g = gpu::GpuBackend::create(bundle_, target_->pid(), gpu_options);
      if (!g) {
        report_.error(g.error());
        return 1;
      }
      gpu_ = std::move(*g);
      if (auto passed = target_->pass_gpu_channel(gpu_->agent_end()); !passed) {
        report_.error(passed.error());
        return 1;
      }
      gpu_->agent_end_sent();
      fmt_.gpu_kernel_names = &gpu_->kernel_names();
      fmt_.refresh_gpu_kernel_names = [this] {
        (void)gpu_->service([this](const std::string &t) { gpu_notice(t); });
      };
      // A late `probe` id: named once the agent has reported its kernel
      // (read what it sent since, once, when the kernel is new).
      fmt_.name_unknown_probe = [this](uint64_t id) {
        std::string name = gpu_->late_probe_name(id);
        if (name.empty()) {
          fmt_.refresh_gpu_kernel_names();
          name = gpu_->late_probe_name(id);
        }
        return name;
      };
      attached += gpu_->attachments();
    }
    // Addresses of the traced process print as symbols even after it exits,
    // and so do those of the children it forks.
    (void)symbols_->runtime().snapshot(target_->pid());
    symbols_->set_traced(target_->pid(), region_->fd());
  }
  if (!opts_.quiet) {
    out_->attached_probes(attached);
    opts_.out->flush(); // -f json: a reader waiting for it sees it now
  }

  for (size_t i : begins) {
    run_cli_probe(i);
    drain();
    if (exit_)
      break;
  }
  if (target_) {
    if (auto go = target_->go(); !go)
      report_.error(go.error());
  }
  // With nothing but begin and end probes there is nothing to wait for:
  // the trace ends after begin, as in bpftrace.
  if (!target_ && intervals.empty() && attached == begins.size() + ends.size())
    exit_ = true;
  uint64_t start = now_ns();
  for (auto &iv : intervals)
    iv.next = start + iv.period;
  while (!exit_ && !g_stop_requested.load()) {
    uint64_t now = now_ns();
    // Wake at least every 100 ms for signals; every 5 ms with a target, so
    // a thread waiting in dlopen for its library's hooks waits little.
    uint64_t wait = target_ ? 5000000 : 100000000;
    for (auto &iv : intervals) {
      if (iv.next <= now) {
        gpu_sync(); // the interval probe may print GPU maps
        run_cli_probe(iv.probe);
        drain();
        iv.next += iv.period;
        if (iv.next <= now)
          iv.next = now + iv.period; // fell behind: do not burst
        if (exit_)
          break;
      }
      wait = std::min(wait, iv.next > now ? iv.next - now : 0);
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
    if (target_) {
      // Libraries the target loaded: their probes get hooked.
      if (auto more = target_->service(); !more)
        out_->runtime_error(more.error(), {});
      refresh_symbols(target_->libraries_changed());
      // The target's first CUDA code load: the agent asks for GPU probes.
      if (gpu_)
        if (auto ok =
                gpu_->service([this](const std::string &t) { gpu_notice(t); });
            !ok)
          out_->runtime_error(ok.error(), {});
      // The traced process is done: so is the trace (as with bpftrace -c
      // and -p).
      if ((target_end_ = target_->ended())) {
        drain();
        break;
      }
      // Its agent is gone: nothing fires any more. A -p trace ends there;
      // a command (-c) is waited for, as bpftrace does.
      if (target_->agent_gone() && !agent_gone_said_) {
        agent_gone_said_ = true;
        out_->runtime_error(
            agent_gone_text(target_->pid(), target_->comm(), opts_.pid != 0),
            {});
        if (opts_.pid)
          break;
      }
    }
  }
  if (gpu_) {
    // A trace ending before the target: copy the device maps now. (A
    // target that exited read them back in its exit hooks.)
    if (target_ && !target_end_)
      gpu_sync();
    auto notice = [this](const std::string &t) { gpu_notice(t); };
    (void)gpu_->service(notice);
    if (!gpu_->ever_connected())
      gpu_notice("the traced program loaded no CUDA code through the driver: "
                 "GPU probes did not run");
  }
  if (target_) {
    target_->collect_counters();
    target_->detach();
    refresh_symbols(true); // a process the trace outlives no more
  }
  for (size_t i : ends) {
    run_cli_probe(i);
    drain();
  }
  drain();
  if (target_end_)
    if (auto said =
            exit_record(*target_end_, opts_.pid != 0, g_stop_requested.load()))
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
