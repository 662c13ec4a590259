// Finding the processes of a system-wide trace (see system_wide.h).
#include "backends/userspace/system_wide.h"

#include "backends/userspace/target.h"
#include "runtime/inject/executable.h"
#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/library_names.h"
#include "runtime/symbols/proc_maps.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/inotify.h>
#include <unistd.h>

namespace ubtrace::backends {
namespace {

constexpr uint64_t kRescanNs = 1000000000ull;
// A program's libraries are mapped by its loader within a few
// milliseconds of the exec; a newcomer is looked at this long from its
// first look.
constexpr uint64_t kNewcomerNs = 200000000ull;
constexpr uint64_t kEagerNs = 20000000ull;
constexpr uint64_t kFirstLookNs = 1000000ull; // then 2, 4, ... ms
constexpr uint64_t kRescanSlackNs = 10000000ull;
constexpr size_t kEventsPerRead = 256;
constexpr int kMostReads = 32; // per call: more than a 4 MiB buffer holds

std::vector<pid_t> all_processes() {
  std::vector<pid_t> pids;
  DIR *d = opendir("/proc");
  if (!d)
    return pids;
  pid_t self = getpid();
  while (struct dirent *e = readdir(d)) {
    char *end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && end && *end == '\0' && pid != self)
      pids.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return pids;
}

} // namespace

Result<std::vector<std::string>>
system_wide_files(const runtime::Bundle &bundle) {
  std::vector<std::string> files;
  for (const auto &spec : bundle.probes) {
    auto req = attach_request(spec);
    if (!req)
      continue;
    if (req->target == "*")
      return make_error(spec.name +
                        ": a probe on every file needs a process to trace: "
                        "use -c 'CMD' or -p PID");
    auto found = runtime::symbols::resolve_binary(req->target);
    if (!found)
      return make_error(spec.name + ": " + found.error());
    for (const auto &f : *found)
      if (std::find(files.begin(), files.end(), f.path) == files.end())
        files.push_back(f.path);
  }
  return files;
}

Result<ProcessScout> ProcessScout::create(const std::vector<std::string> &files,
                                          int region_fd) {
  ProcessScout s;
  if (auto id = runtime::symbols::identify_file("/proc/self/fd/" +
                                                std::to_string(region_fd)))
    s.region_ = *id;
  for (const auto &path : files) {
    auto id = runtime::symbols::identify_file(path);
    if (!id)
      return make_error(path + ": " + id.error());
    s.files_.push_back(*id);
    s.paths_.push_back(path);
    auto library = runtime::inject::elf_shared_library(path);
    s.library_probed_ = s.library_probed_ || !library || *library;
  }
  auto events = runtime::inject::ProcEvents::open();
  if (events) {
    s.events_.emplace(std::move(*events));
    s.how_ = "process events";
    return s;
  }
  s.opens_ = runtime::inject::UniqueFd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (s.opens_.get() < 0)
    return make_error("cannot watch the probed files: inotify: " +
                      std::string(strerror(errno)));
  for (const auto &path : files)
    if (inotify_add_watch(s.opens_.get(), path.c_str(), IN_OPEN) < 0)
      return make_error("cannot watch " + path +
                        ": inotify: " + std::string(strerror(errno)));
  s.how_ = "opens of the files (process events: " + events.error() + ")";
  return s;
}

Result<ProcessScout::Look> ProcessScout::look(pid_t pid) const {
  auto maps = runtime::symbols::read_proc_maps(pid);
  if (!maps)
    return make_error(maps.error());
  Look l;
  for (const auto &m : *maps) {
    l.inherited =
        l.inherited || (region_ && m.inode != 0 &&
                        region_->same_inode(m.dev_major, m.dev_minor, m.inode));
    if (!m.is_file())
      continue;
    std::string_view base = runtime::symbols::basename_of(m.path);
    l.glibc =
        l.glibc || base.starts_with("libc.so") || base.starts_with("libc-2.");
    for (size_t i = 0; i < files_.size() && !l.probed; ++i)
      l.probed = files_[i].same_inode(m.dev_major, m.dev_minor, m.inode) ||
                 m.path == paths_[i];
  }
  return l;
}

void ProcessScout::read_events(uint64_t now_ns) {
  // All that is queued (as much as the socket's buffer holds), not one
  // batch: an exec read a call late is one a rescan may meet first, and
  // then take on as it runs, not held.
  bool more = events_.has_value();
  for (int round = 0; more && round < kMostReads; ++round) {
    auto batch = events_->read_now(kEventsPerRead);
    more = batch.size() == kEventsPerRead;
    for (const auto &e : batch)
      if (e.kind == runtime::inject::ProcEvent::Kind::Exec &&
          e.tgid != getpid())
        // The kernel's time of the exec: a process already taken on
        // from a rescan is not taken for a new program when its exec
        // is read late.
        recent_[e.tgid] = {std::min(now_ns, e.monotonic_ns), 0, now_ns,
                           kFirstLookNs};
      else if (e.kind == runtime::inject::ProcEvent::Kind::Exit &&
               e.pid == e.tgid)
        recent_.erase(e.tgid);
  }
  if (events_ && events_->overruns() != overruns_seen_) {
    overruns_seen_ = events_->overruns();
    rescan_now_ = true; // what was dropped is found in /proc
  }
}

std::vector<pid_t> ProcessScout::due(uint64_t now_ns) {
  read_events(now_ns);
  if (opens_.get() >= 0) {
    // Who opened is not told: /proc is looked at now and a little later
    // (an exec'd program's maps are its old image's until the exec ends;
    // its loader maps the libraries a few milliseconds on).
    alignas(struct inotify_event) char buf[4096];
    bool opened = false;
    while (::read(opens_.get(), buf, sizeof buf) > 0)
      opened = true;
    // Each open asks for its series; a rescan already due within 10 ms of
    // one of its times serves for it, so a loop of execs costs at most a
    // rescan per 10 ms, not one per open.
    if (opened)
      for (uint64_t after : {0ull, 10000000ull, 50000000ull, 200000000ull}) {
        uint64_t at = now_ns + after;
        auto near =
            std::find_if(rescans_.begin(), rescans_.end(), [&](uint64_t t) {
              return t + kRescanSlackNs >= at && at + kRescanSlackNs >= t;
            });
        if (near == rescans_.end())
          rescans_.insert(
              std::upper_bound(rescans_.begin(), rescans_.end(), at), at);
      }
    while (!rescans_.empty() && rescans_.front() <= now_ns) {
      rescans_.erase(rescans_.begin());
      rescan_now_ = true;
    }
  }
  // A newcomer's window counts from its first look, not its exec: a CLI
  // busy longer than the window (injecting another process under load)
  // still looks at it.
  for (auto it = recent_.begin(); it != recent_.end();)
    it = it->second.looked_ns && now_ns - it->second.looked_ns > kNewcomerNs
             ? recent_.erase(it)
             : std::next(it);
  auto first_look = [&](Newcomer &n) {
    if (!n.looked_ns)
      n.looked_ns = now_ns;
  };
  if (rescan_now_ || now_ns - last_rescan_ns_ >= kRescanNs) {
    rescan_now_ = false;
    last_rescan_ns_ = now_ns;
    for (auto &[pid, n] : recent_)
      first_look(n);
    return all_processes();
  }
  // Each newcomer at every call for its first 20 ms (its loader's time:
  // the sooner it is injected, the less of it runs untraced), then 1, 2,
  // 4 ... ms apart. Most programs settle at their second look (their
  // loader done, no probed file), so a fork-exec loop costs a few looks
  // per program.
  std::vector<pid_t> pids;
  for (auto &[pid, n] : recent_) {
    if (n.next_ns > now_ns)
      continue;
    pids.push_back(pid);
    first_look(n);
    if (now_ns - n.looked_ns < kEagerNs)
      continue;
    n.next_ns = now_ns + n.step_ns;
    n.step_ns *= 2;
  }
  return pids;
}

bool ProcessScout::fresh_exec(pid_t pid) {
  auto it = recent_.find(pid);
  if (!events_ || it == recent_.end() || it->second.asked)
    return false;
  it->second.asked = true;
  return true;
}

bool ProcessScout::may_map(pid_t pid) const {
  if (library_probed_)
    return true;
  auto exe =
      runtime::symbols::identify_file("/proc/" + std::to_string(pid) + "/exe");
  if (!exe)
    return false;
  return std::any_of(files_.begin(), files_.end(),
                     [&](const runtime::symbols::FileIdentity &f) {
                       return f.same_inode(exe->dev_major, exe->dev_minor,
                                           exe->inode);
                     });
}

void ProcessScout::settled(pid_t pid) {
  recent_.erase(pid);
}

} // namespace ubtrace::backends
