// The in-target agent: a small shared library loaded into the traced
// process (LD_PRELOAD for -c, injected for -p). It maps the CLI's maps
// region, receives verified probe programs and hook requests over the agent
// channel (protocol.h), installs inline hooks, and runs the programs when
// the hooks fire. It links no LLVM and no libbpf, throws nothing, and
// allocates nothing on the probe path. If the CLI goes away, it removes its
// hooks and the target runs on.
#include "runtime/abi.h"
#include "runtime/agent/agent_thread.h"
#include "runtime/agent/cli_link.h"
#include "runtime/agent/clone_sites.h"
#include "runtime/agent/code_check.h"
#include "runtime/agent/got_interpose.h"
#include "runtime/agent/named_values.h"
#include "runtime/agent/perf_events.h"
#include "runtime/agent/profile.h"
#include "runtime/agent/program_wire.h"
#include "runtime/agent/protocol.h"
#include "runtime/agent/raw_notice.h"
#include "runtime/agent/raw_syscall.h"
#include "runtime/agent/sandbox_notice.h"
#include "runtime/agent/session_counters.h"
#include "runtime/agent/syscall_signals.h"
#include "runtime/agent/syscalls.h"
#include "runtime/helpers/all_helpers.h"
#include "runtime/helpers/libcalls.h"
#include "runtime/helpers/pid_view.h"
#include "runtime/helpers/process_facts.h"
#include "runtime/helpers/safe_copy.h"
#include "runtime/hook/hook.h"
#include "runtime/hook/memory_map.h"
#include "runtime/hook/thread_pool.h"
#include "runtime/hook/trap_handler.h"
#include "runtime/hook/trap_safety.h"
#include "runtime/jit/remote_symbols.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/region.h"
#include "runtime/maps/thread_slot.h"
#include "runtime/unwind/loaded_modules.h"
#include "runtime/vm/interpreter.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/bpf.h>
#include <linux/futex.h>
#include <linux/magic.h>
#include <memory>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::agent {
namespace {

constexpr size_t kMaxPrograms = 4096;

// One probe to run at a hooked site. Sites of one hook form a list that
// only grows while the hook is installed (new probes append with a
// release store, so they run in the script's order, as in bpftrace), so
// the handler walks it without a lock.
using NativeEntry = uint64_t (*)(void *ctx);

struct Site {
  NativeEntry native; // JIT'd by the CLI for this process; else interpret
  const vm::BoundProgram *program;
  uint64_t probe_id;
  uint64_t func_ip;
  std::atomic<Site *> next{nullptr};
  uint32_t usdt_nargs;
  bool entry_args; // a return probe reading the entry's arguments
  UsdtArgWire usdt_args[abi::kUsdtMaxArgs];
};

uint64_t extend(uint64_t v, const UsdtArgWire &a) {
  if (a.size >= 8)
    return v;
  uint64_t mask = (uint64_t(1) << (8 * a.size)) - 1;
  v &= mask;
  if (a.is_signed && (v >> (8 * a.size - 1)) & 1)
    v |= ~mask;
  return v;
}

// A USDT argument at a hit, as the note describes it: a register, memory
// at base + index * scale + displacement (read safely), or a constant.
uint64_t usdt_arg(const abi::PtRegsLayout &regs, const UsdtArgWire &a) {
  const auto *r = reinterpret_cast<const uint64_t *>(&regs);
  switch (a.kind) {
  case UsdtArgWire::Constant:
    // "4@$-202182160" is the u32 4092785136: sized like any argument.
    return extend(static_cast<uint64_t>(a.value), a);
  case UsdtArgWire::Register: {
    uint64_t v = r[a.reg];
    if (a.high_byte)
      v = (v >> 8) & 0xff;
    return extend(v, a);
  }
  case UsdtArgWire::Memory: {
    uint64_t addr = static_cast<uint64_t>(a.value);
    if (a.has_base)
      addr += r[a.reg];
    if (a.has_index)
      addr += r[a.index_reg] * a.scale;
    uint64_t v = 0;
    runtime::helpers::safe_read(&v, a.size ? a.size : 8,
                                reinterpret_cast<const void *>(addr));
    return extend(v, a);
  }
  default:
    return 0;
  }
}

struct HookEntry {
  uint64_t address = 0;
  HookKind kind = HookKind::Entry;
  runtime::hook::HookId id;
  // The agent's own use of the address (watching dlopen/dlclose), run
  // before the probes there.
  std::atomic<void (*)(runtime::hook::PtRegs *)> watch{nullptr};
  std::atomic<Site *> sites{nullptr};
  std::vector<std::unique_ptr<Site>> owned;
  // What the patch wrote, to tell when the code is gone (code_check.h),
  // and the load bias of the object holding it.
  PatchedCode patch;
  uint64_t object_bias = 0;

  // Appends a probe to run here: the site is complete before the release
  // store publishes it to handlers walking the list without a lock.
  void append(std::unique_ptr<Site> site) {
    Site *tail = sites.load(std::memory_order_relaxed);
    while (tail && tail->next.load(std::memory_order_relaxed))
      tail = tail->next.load(std::memory_order_relaxed);
    (tail ? tail->next : sites).store(site.get(), std::memory_order_release);
    owned.push_back(std::move(site));
  }
};

// Hooks dropped because their code went away: a dispatch that began before
// may still use them, so they are never freed.
std::vector<std::unique_ptr<HookEntry>> &forgotten_hooks() {
  static auto *list = new std::vector<std::unique_ptr<HookEntry>>;
  return *list;
}

// The loaded object holding `addr` (null if none).
const struct link_map *object_of(uint64_t addr) {
  Dl_info info{};
  struct link_map *map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(addr), &info,
               reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP))
    return nullptr;
  return map;
}

// Its load bias (0 if none).
uint64_t object_bias_of(uint64_t addr) {
  const struct link_map *map = object_of(addr);
  return map ? map->l_addr : 0;
}

class Agent {
public:
  Agent(OwnedFd sock, bool spawned)
      : sock_(std::move(sock)), spawned_(spawned),
        // A command's agent starts before main: what is loaded then is
        // the program and what it needs, never unloaded.
        startup_objects_(spawned ? loaded_objects()
                                 : std::vector<LoadedObject>{}) {}
  bool spawned() const { return spawned_; }
  // The CLI asked to detach or hung up: the session is on its way out.
  bool ending() const { return ending_.load(std::memory_order_acquire); }

  bool hello(bool waiting);
  void close_channel() { sock_.close(); }
  void serve();   // the channel thread's loop
  void wait_go(); // the constructor of a spawned target waits here
  void handle(const Message &m);

  runtime::maps::Region *region() const { return region_.get(); } // GPU

  // The channel's number, for notices sent without libc (raw_notice.h).
  int channel_fd() const { return sock_.get(); }

private:
  OwnedFd sock_; // the program may take the number: owned_fd.h
  bool spawned_;
  std::atomic<bool> ending_{false};
  std::unique_ptr<runtime::maps::Region> region_;
  vm::HelperImpls helpers_ = runtime::helpers::all_helper_impls();
  std::unique_ptr<vm::BoundProgram> programs_[kMaxPrograms];
  size_t nprograms_ = 0;
  std::vector<std::unique_ptr<HookEntry>> hooks_;
  pthread_mutex_t go_lock_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t go_cond_ = PTHREAD_COND_INITIALIZER;
  bool go_ = false;
  // Sends come from the channel thread and from threads in dlopen.
  pthread_mutex_t send_lock_ = PTHREAD_MUTEX_INITIALIZER;
  bool watching_ = false;
  bool watching_unloads_ = false;
  OwnedFd procfs_; // the CLI's /proc (Procfs), for reading our mappings
  struct CodeBlock {
    uint64_t at, size; // what the CLI may write: aligned address, bytes
    void *map;         // the mapping holding it
    size_t map_len;
  };
  std::vector<CodeBlock> code_;
  // USDT semaphores this session raised, with the load bias of their
  // object (one unloaded since is not written to again).
  struct Semaphore {
    uint16_t *address;
    uint64_t object_bias;
  };
  std::vector<Semaphore> semaphores_;
  bool forgot_any_ = false; // hooks went to forgotten_hooks() this session
  std::vector<LoadedObject> startup_objects_;

public:
  // Whether the code at `address` lies in an object the program may still
  // unload (not the program itself, not what it was started with).
  bool unloadable(uint64_t address) const;

private:
  uint64_t unloads_seen_ = 0; // objects_unloaded() at the last revalidation

  Result<void> send(const Message &m);
  // The agent's own watch on the return of libc's `function`.
  Result<void> watch_return(const char *function,
                            void (*watch)(runtime::hook::PtRegs *),
                            bool &watching);
  Result<void> watch_libraries();
  Result<void> watch_unloads();
  // The hook entry for `address` and `kind`, installed if new.
  Result<HookEntry *> entry_for(uint64_t address, HookKind kind,
                                const runtime::hook::HookOptions &options);
  // Drops the hooks whose code is gone; returns them.
  std::vector<ForgottenHook> revalidate();

  void reply(int32_t status, uint64_t value = 0, const std::string &error = "");
  void release_waiter();
  void detach_all();

public:
  // After the session: unmaps code and maps, frees programs.
  void release_memory();

private:
  Result<uint64_t> add_program(const Message &m);
  // The CFI rows of the loaded modules, for stack walks (unwind/).
  void refresh_unwind();
  size_t unwind_over_budget_ = 0;
  Result<void> add_hook(const HookMsg &h);
  // profile probes: one entry (no hook, the same site list) per period.
  std::vector<std::unique_ptr<HookEntry>> profile_entries_;
  std::vector<std::unique_ptr<HookEntry>> syscall_entries_;
  bool profiled_ = false; // this session sampled: detach waits for samples
  Result<uint64_t> add_profile(const ProfileMsg &p);
  Result<uint64_t> add_syscall(const SyscallMsg &s);
  // software:/hardware: probes: one entry per probe.
  std::vector<std::unique_ptr<HookEntry>> perf_entries_;
  Result<uint64_t> add_perf_event(const PerfEventMsg &p);
  std::unique_ptr<Site> sample_site(uint32_t program, uint64_t probe_id,
                                    uint64_t native_entry);
  // A request that adds probes: its message read, `add` run, its value or
  // error the reply.
  template <class Msg>
  void add_from(const Message &m, const char *malformed,
                Result<uint64_t> (Agent::*add)(const Msg &)) {
    Msg msg{};
    if (!m.read(msg)) {
      reply(-EINVAL, 0, malformed);
      return;
    }
    auto r = (this->*add)(msg);
    if (!r)
      reply(-EINVAL, 0, r.error());
    else
      reply(0, *r);
  }
};

Agent *g_agent = nullptr;

// Code that stays mapped as long as the process: the program, what it was
// started with, libc and the dynamic loader (which nothing unloads). libc's
// and the loader's functions are called as the ABI says; the program's may
// be anything (hand-written assembly with its own conventions).
syscalls::SiteFacts site_facts(uint64_t address) {
  syscalls::SiteFacts facts;
  const struct link_map *map = object_of(address);
  if (!map || !g_agent)
    return facts; // in no object: JIT code, a trampoline
  static const struct link_map *libc =
      object_of(reinterpret_cast<uint64_t>(&getpid));
  static const struct link_map *loader =
      object_of(reinterpret_cast<uint64_t>(&_r_debug));
  facts.abi_calls = map == libc || map == loader;
  facts.permanent = facts.abi_calls || !g_agent->unloadable(address);
  return facts;
}
void set_gpu_channel(OwnedFd fd); // below

// A forked child lets go of the channel (owned_fd.h) and sends no notice
// (raw_notice.h: only the process that armed the channel does), so it
// never waits for a CLI; vfork children run nothing of ours before their
// exec.

// Library loads and unloads told to the CLI, waited on (raw_notice.h).
TicketedNotices g_loads, g_unloads;

// A dlopen returned: the CLI hooks what waits for the library before the
// thread goes on. Nothing here may call libc (raw_notice.h): the handle is
// glibc's link map, its name is read in place.
void on_dlopen_return(runtime::hook::PtRegs *regs) {
  const auto *map = reinterpret_cast<const struct link_map *>(regs->rax);
  if (!map || !map->l_name || !map->l_name[0])
    return;
  size_t len = 0;
  while (map->l_name[len] && len < kRawNoticeMax)
    len++;
  (void)notify_and_wait(g_loads, MsgType::Library,
                        reinterpret_cast<const uint8_t *>(map->l_name), len);
}

// The probe path: runs every program of a site with a ctx built from the
// hook's registers. No locks, no allocation.
void on_hit(runtime::hook::PtRegs *regs, void *user) {
  auto *entry = static_cast<HookEntry *>(user);
  // The context extends the hook's registers in place, in the tail room the
  // hook leaves after them (no copy of the registers on the hot path).
  static_assert(sizeof(runtime::hook::PtRegs) == sizeof(abi::PtRegsLayout));
  static_assert(sizeof(abi::HostProbeCtx) - sizeof(abi::PtRegsLayout) <=
                runtime::hook::kRegsTailRoom);
  static_assert(offsetof(abi::HostProbeCtx, regs) == 0);
  if (auto watch = entry->watch.load(std::memory_order_acquire))
    watch(regs);
  auto &ctx = *reinterpret_cast<abi::HostProbeCtx *>(regs);
  for (Site *s = entry->sites.load(std::memory_order_acquire); s;
       s = s->next.load(std::memory_order_acquire)) {
    ctx.probe_id = s->probe_id;
    ctx.func_ip = s->func_ip;
    for (uint32_t i = 0; i < s->usdt_nargs; i++)
      ctx.usdt_args[i] = usdt_arg(ctx.regs, s->usdt_args[i]);
    if (s->entry_args) {
      // Zeros for a call that entered before the site kept them.
      const uint64_t *kept = runtime::hook::return_entry_args();
      for (size_t i = 0; i < std::size(abi::kArgRegs); i++)
        ctx.usdt_args[i] = kept ? kept[i] : 0;
    }
    if (s->native) {
      s->native(&ctx);
      continue;
    }
    vm::RunResult r = vm::run(*s->program, &ctx);
    if (r.status != vm::RunStatus::Ok &&
        size_t(r.status) < std::size(g_run_errors))
      g_run_errors[size_t(r.status)].fetch_add(1, std::memory_order_relaxed);
  }
}

// System call probes by event: [exit][nr], the last slot for every call
// (raw_syscalls).
constexpr int kSyscallSlots = 1024;
std::atomic<HookEntry *> g_syscall_entries[2][kSyscallSlots + 1];

void on_syscall(runtime::hook::PtRegs *regs, int nr, bool exit) {
  if (nr >= 0 && nr < kSyscallSlots)
    if (HookEntry *e =
            g_syscall_entries[exit][nr].load(std::memory_order_acquire))
      on_hit(regs, e);
  if (HookEntry *e = g_syscall_entries[exit][kSyscallSlots].load(
          std::memory_order_acquire))
    on_hit(regs, e);
}

bool Agent::hello(bool waiting) {
  HelloMsg h{kProtocolVersion, static_cast<uint32_t>(getpid()),
             waiting ? 1u : 0u, 0};
  return bool(send_message(sock_, Message::of(MsgType::Hello, h)));
}

// A CLI that came while another one traces the process: told so, hung up.
void send_busy(OwnedFd &sock) {
  HelloMsg h{kProtocolVersion, static_cast<uint32_t>(getpid()), 0, 1};
  (void)send_message(sock, Message::of(MsgType::Hello, h));
}

Result<void> Agent::send(const Message &m) {
  pthread_mutex_lock(&send_lock_);
  auto r = send_message(sock_, m);
  pthread_mutex_unlock(&send_lock_);
  return r;
}

void Agent::reply(int32_t status, uint64_t value, const std::string &error) {
  ReplyMsg r{status, 0, value};
  Message m = Message::of(MsgType::Reply, r);
  m.payload.insert(m.payload.end(), error.begin(), error.end());
  (void)send(m);
}

// A dlclose returned: what it unloaded is found on the agent's thread, when
// the CLI asks (Revalidate). The thread waits until the CLI has had the
// hooks of what is gone dropped and watches for its return, so that
// loading it again right away is hooked again.
void on_dlclose_return(runtime::hook::PtRegs *) {
  (void)notify_and_wait(g_unloads, MsgType::Unloaded, nullptr, 0);
}

Result<void> Agent::watch_return(const char *function,
                                 void (*watch)(runtime::hook::PtRegs *),
                                 bool &watching) {
  if (watching)
    return {};
  void *address = dlsym(RTLD_DEFAULT, function);
  if (!address)
    return make_error(std::string("cannot find ") + function +
                      " in the target");
  auto entry =
      entry_for(reinterpret_cast<uint64_t>(address), HookKind::Return, {});
  if (!entry)
    return make_error(std::string("cannot watch ") + function + ": " +
                      entry.error());
  (*entry)->watch.store(watch, std::memory_order_release);
  watching = true;
  return {};
}

Result<void> Agent::watch_libraries() {
  return watch_return("dlopen", &on_dlopen_return, watching_);
}

// Hooks in a library that is unloaded go with it: every dlclose is told
// to the CLI, which has the agent drop what is gone and hooks it again
// when it is back.
Result<void> Agent::watch_unloads() {
  if (!watching_unloads_)
    unloads_seen_ = objects_unloaded();
  return watch_return("dlclose", &on_dlclose_return, watching_unloads_);
}

std::vector<ForgottenHook> Agent::revalidate() {
  std::vector<ForgottenHook> out;
  uint64_t unloads = objects_unloaded();
  if (unloads == unloads_seen_)
    return out; // nothing was unloaded since the last look
  unloads_seen_ = unloads;
  std::vector<PatchedCode> patches;
  for (auto &e : hooks_)
    patches.push_back(e->patch);
  std::vector<bool> intact = patches_intact(patches);
  std::vector<uint64_t> gone_objects;
  std::vector<std::unique_ptr<HookEntry>> kept;
  for (size_t i = 0; i < hooks_.size(); i++) {
    auto &e = hooks_[i];
    if (intact[i] || !e->patch.len) {
      kept.push_back(std::move(e));
      continue;
    }
    // Both kinds at an address share its site: forgotten together.
    (void)runtime::hook::forget_hook(e->address);
    out.push_back({e->address, static_cast<uint32_t>(e->kind), 0});
    gone_objects.push_back(e->object_bias);
    forgotten_hooks().push_back(std::move(e));
    forgot_any_ = true;
  }
  hooks_ = std::move(kept);
  // Semaphores of an object gone (or gone and back: its hooks were not
  // intact) are not the ones this session raised any more.
  std::vector<Semaphore> live;
  for (const Semaphore &s : semaphores_) {
    bool gone = std::find(gone_objects.begin(), gone_objects.end(),
                          s.object_bias) != gone_objects.end() ||
                !data_of_object_loaded(reinterpret_cast<uint64_t>(s.address),
                                       s.object_bias);
    if (!gone)
      live.push_back(s);
  }
  semaphores_ = std::move(live);
  return out;
}

void Agent::release_waiter() {
  pthread_mutex_lock(&go_lock_);
  go_ = true;
  pthread_cond_broadcast(&go_cond_);
  pthread_mutex_unlock(&go_lock_);
}

void Agent::wait_go() {
  pthread_mutex_lock(&go_lock_);
  while (!go_)
    pthread_cond_wait(&go_cond_, &go_lock_);
  pthread_mutex_unlock(&go_lock_);
}

void Agent::detach_all() {
  // Threads waiting in dlopen or dlclose go on.
  release_tickets(g_loads);
  release_tickets(g_unloads);
  watching_ = watching_unloads_ = false;
  // No new sample starts a probe; those running end before the programs go.
  profile::stop();
  perf::stop();
  syscalls::stop();
  syscalls::restore_sites();
  clone_sites::restore();
  // Hooks whose library is gone are forgotten, not unpatched: their code
  // is unmapped, or another's.
  (void)revalidate();
  // uninstall_hook returns once no thread is in (or will enter) the
  // handler, so the sites can go.
  for (auto &h : hooks_)
    (void)runtime::hook::uninstall_hook(h->id);
  hooks_.clear();
  // No system call probe starts from here (a call that was on its way when
  // tracing stopped may still come back to its exit probes)...
  for (auto &side : g_syscall_entries)
    for (auto &e : side)
      e.store(nullptr, std::memory_order_release);
  // ...and dispatches of forgotten hooks, samples and system call probes
  // that began before are over before the programs go.
  if (forgot_any_ || profiled_ || !syscall_entries_.empty())
    runtime::hook::wait_for_running_dispatches();
  syscall_entries_.clear();
  profile_entries_.clear();
  perf_entries_.clear();
  profiled_ = false;
  // The program's USDT sites go back to skipping their argument set-up.
  for (const Semaphore &s : semaphores_)
    __atomic_sub_fetch(s.address, 1, __ATOMIC_SEQ_CST);
  semaphores_.clear();
}

void Agent::release_memory() {
  // Called after detach_all: no thread runs a probe any more.
  for (const auto &b : code_)
    munmap(b.map, b.map_len);
  code_.clear();
  for (size_t i = 0; i < nprograms_; i++)
    programs_[i].reset();
  nprograms_ = 0;
  region_.reset();
  // No hook is installed or removed any more: the CLI's /proc goes.
  runtime::hook::MemoryMap::use_procfs(-1);
  runtime::helpers::use_pid_view(-1, false);
  procfs_.close();
}

Result<uint64_t> Agent::add_program(const Message &m) {
  if (!region_)
    return make_error("no maps region yet");
  if (nprograms_ >= kMaxPrograms)
    return make_error("too many programs");
  auto wire = decode_program(m.payload);
  if (!wire)
    return std::move(wire).take_error();
  std::vector<vm::MapBinding> bindings;
  for (uint32_t index : wire->region_map) {
    if (index >= region_->map_count())
      return make_error("program refers to map " + std::to_string(index) +
                        " beyond the region's " +
                        std::to_string(region_->map_count()));
    void *map = region_->map(index);
    vm::MapBinding b;
    b.handle = reinterpret_cast<uint64_t>(map);
    b.value_base = runtime::maps::array_value_base(map);
    b.for_each = &ubt_map_iterate;
    bindings.push_back(b);
  }
  auto bound = vm::bind_program(wire->program, bindings, helpers_);
  if (!bound)
    return std::move(bound).take_error();
  // A program that walks user stacks: the loaded modules' CFI rows, built
  // now (off the probe path) and after each library load and unload.
  for (const auto &call : wire->program.helper_calls)
    if (call.helper == BPF_FUNC_get_stack &&
        !runtime::unwind::loaded_modules_enabled()) {
      runtime::unwind::enable_loaded_modules();
      refresh_unwind();
    }
  programs_[nprograms_] = std::make_unique<vm::BoundProgram>(std::move(*bound));
  return uint64_t(nprograms_++);
}

void Agent::refresh_unwind() {
  if (!runtime::unwind::loaded_modules_enabled())
    return;
  auto stats = runtime::unwind::refresh_loaded_modules();
  unwind_over_budget_ += stats.over_budget;
}

namespace {

// Functions that return twice, the first time with 0: their return hooks
// keep the shadow entry for the second return (runtime/hook/hook.h). Found
// by the dynamic symbol at exactly the hooked address (libc exports them).
// Whether the dynamic symbol at exactly `address` is one of `names`.
template <size_t N>
bool named(uint64_t address, const char *const (&names)[N]) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(address), &info) || !info.dli_sname ||
      reinterpret_cast<uint64_t>(info.dli_saddr) != address)
    return false;
  for (const char *name : names)
    if (std::strcmp(info.dli_sname, name) == 0)
      return true;
  return false;
}

bool returns_twice(uint64_t address) {
  static const char *const kNames[] = {
      "vfork",     "__vfork",     "setjmp",     "_setjmp", "__setjmp",
      "sigsetjmp", "__sigsetjmp", "getcontext", "savectx", "__libc_vfork"};
  return named(address, kNames);
}

// Functions that act on their caller's address (__builtin_return_address):
// dlsym(RTLD_NEXT, ...) looks past the calling object. A return probe would
// make it see the return stub instead (glibc takes an unknown caller for
// the main program), and an interposing library would find its own
// definition again. Their return probes are refused. (dlopen also reads
// it, for the caller's RUNPATH and $ORIGIN: under a return probe a library
// that dlopens through its own RUNPATH gets the program's. Kernel
// uretprobes do the same; dlopen's return probes, which tools rely on,
// stay allowed.)
const char *inspects_its_caller(uint64_t address) {
  static const char *const kNames[] = {"dlsym",        "dlvsym",
                                       "___dlsym",     "___dlvsym",
                                       "__libc_dlsym", "__libc_dlvsym"};
  Dl_info info{};
  if (!named(address, kNames) ||
      !dladdr(reinterpret_cast<void *>(address), &info))
    return nullptr;
  return info.dli_sname;
}

} // namespace

Result<HookEntry *>
Agent::entry_for(uint64_t address, HookKind kind,
                 const runtime::hook::HookOptions &options) {
  for (auto &e : hooks_)
    if (e->address == address && e->kind == kind)
      return e.get();
  auto e = std::make_unique<HookEntry>();
  e->address = address;
  e->kind = kind;
  auto id = runtime::hook::install_hook(address,
                                        kind == HookKind::Entry
                                            ? runtime::hook::HookKind::Entry
                                            : runtime::hook::HookKind::Return,
                                        &on_hit, e.get(), options);
  if (!id)
    return std::move(id).take_error();
  e->id = *id;
  // What the patch wrote, read back now that it is there.
  if (auto p = runtime::hook::check_patchable(address)) {
    e->patch.at = p->patch_address;
    e->patch.len = p->mode == runtime::hook::PatchMode::Jump ? 5 : 1;
    for (uint8_t i = 0; i < e->patch.len; i++)
      e->patch.bytes[i] =
          *reinterpret_cast<const volatile uint8_t *>(e->patch.at + i);
  }
  e->object_bias = object_bias_of(address);
  hooks_.push_back(std::move(e));
  return hooks_.back().get();
}

Result<void> Agent::add_hook(const HookMsg &h) {
  if (h.program >= nprograms_)
    return make_error("no program " + std::to_string(h.program));
  auto kind = static_cast<HookKind>(h.kind);
  if (kind == HookKind::Return)
    if (const char *name = inspects_its_caller(h.address))
      return make_error("cannot hook the return of " + std::string(name) +
                        runtime::hook::kUnsafeSiteMarker.data() +
                        "it acts on its caller's return address, which a "
                        "return probe replaces");
  // Before the first hook goes live (a running process runs on): probes
  // in tasks that share their parent's TLS say their own ids
  // (clone_sites.h). With system call probes dispatch sees to that.
  if (!syscalls::active())
    clone_sites::rewrite();
  runtime::hook::HookOptions opts;
  opts.function = {h.func_start, h.func_size};
  opts.returns_twice = kind == HookKind::Return && returns_twice(h.address);
  opts.entry_args = kind == HookKind::Return && (h.flags & kHookEntryArgs);
  auto entry = entry_for(h.address, kind, opts);
  if (!entry)
    return std::move(entry).take_error();
  if (opts.entry_args)
    if (auto kept = runtime::hook::keep_entry_args(h.address); !kept)
      return std::move(kept).take_error();
  auto site = std::make_unique<Site>();
  site->native = reinterpret_cast<NativeEntry>(h.native_entry);
  site->program = programs_[h.program].get();
  site->probe_id = h.probe_id;
  site->func_ip = h.func_ip;
  site->usdt_nargs = std::min<uint32_t>(h.usdt_nargs, abi::kUsdtMaxArgs);
  site->entry_args = opts.entry_args;
  std::memcpy(site->usdt_args, h.usdt_args, sizeof site->usdt_args);
  (*entry)->append(std::move(site));
  // Its library may be unloaded: the hook must not outlive it.
  if (unloadable(h.address))
    (void)watch_unloads();
  return {};
}

// The site of a probe that runs in a signal handler (a profile or perf
// event sample): no function, no arguments.
std::unique_ptr<Site> Agent::sample_site(uint32_t program, uint64_t probe_id,
                                         uint64_t native_entry) {
  auto site = std::make_unique<Site>();
  site->native = reinterpret_cast<NativeEntry>(native_entry);
  site->program = programs_[program].get();
  site->probe_id = probe_id;
  site->func_ip = 0;
  site->usdt_nargs = 0;
  site->entry_args = false;
  return site;
}

Result<uint64_t> Agent::add_profile(const ProfileMsg &p) {
  if (p.program >= nprograms_)
    return make_error("no program " + std::to_string(p.program));
  HookEntry *entry = nullptr;
  for (auto &e : profile_entries_)
    if (e->address == p.period_ns)
      entry = e.get();
  if (!entry) {
    profile_entries_.push_back(std::make_unique<HookEntry>());
    entry = profile_entries_.back().get();
    entry->address = p.period_ns; // the period, for the lookup above
  }
  entry->append(sample_site(p.program, p.probe_id, p.native_entry));
  profiled_ = true;
  auto armed = profile::add_period(p.period_ns, &on_hit, entry);
  if (!armed)
    return std::move(armed).take_error();
  return uint64_t(armed->threads) | uint64_t(armed->blocked) << 32;
}

Result<uint64_t> Agent::add_perf_event(const PerfEventMsg &p) {
  if (p.program >= nprograms_)
    return make_error("no program " + std::to_string(p.program));
  if (p.count == 0)
    return make_error("a count of 0");
  auto entry = std::make_unique<HookEntry>();
  entry->append(sample_site(p.program, p.probe_id, p.native_entry));
  HookEntry *raw = entry.get();
  perf_entries_.push_back(std::move(entry));
  profiled_ = true; // detach waits for samples running
  auto opened =
      perf::add_event({p.type, p.config, p.config1, p.config2}, p.period,
                      p.count, p.in_kernel != 0, &on_hit, raw);
  if (!opened)
    return std::move(opened).take_error();
  return *opened;
}

Result<uint64_t> Agent::add_syscall(const SyscallMsg &s) {
  if (s.program >= nprograms_)
    return make_error("no program " + std::to_string(s.program));
  if (s.nr >= kSyscallSlots || s.nr < -1)
    return make_error("no system call " + std::to_string(s.nr));
  auto started = syscalls::start(&on_syscall);
  if (!started)
    return std::move(started).take_error();
  auto &slot = g_syscall_entries[s.exit != 0][s.nr < 0 ? kSyscallSlots : s.nr];
  HookEntry *entry = slot.load(std::memory_order_relaxed);
  if (!entry) {
    syscall_entries_.push_back(std::make_unique<HookEntry>());
    entry = syscall_entries_.back().get();
  }
  auto site = std::make_unique<Site>();
  site->native = reinterpret_cast<NativeEntry>(s.native_entry);
  site->program = programs_[s.program].get();
  site->probe_id = s.probe_id;
  site->func_ip = 0;
  site->usdt_nargs = std::min<uint32_t>(s.nargs, abi::kUsdtMaxArgs);
  site->entry_args = false;
  std::memcpy(site->usdt_args, s.args, sizeof site->usdt_args);
  entry->append(std::move(site));
  slot.store(entry, std::memory_order_release);
  syscalls::want(s.nr, s.exit != 0);
  return uint64_t(started->threads) | uint64_t(started->blocked) << 32;
}

bool Agent::unloadable(uint64_t address) const {
  const struct link_map *map = object_of(address);
  if (!map)
    return true; // unknown: watch
  if (!map->l_name || !map->l_name[0])
    return false; // the program
  for (const LoadedObject &o : startup_objects_)
    if (o.bias == map->l_addr && o.name == map->l_name)
      return false;
  return true;
}

void Agent::handle(const Message &m) {
  switch (m.type) {
  case MsgType::Region: {
    if (m.fd < 0) {
      reply(-EINVAL, 0, "no fd with the region message");
      return;
    }
    // Ours since it arrived; read (mapped) only while still ours.
    OwnedFd fd = OwnedFd::adopt(m.fd);
    uint64_t wanted = 0;
    (void)m.read(wanted);
    auto r = fd.usable()
                 ? runtime::maps::Region::attach(fd.get(), wanted)
                 : Result<runtime::maps::Region>(make_error(kChannelLost));
    fd.close();
    if (!r) {
      reply(-EINVAL, 0, r.error());
      return;
    }
    region_ = std::make_unique<runtime::maps::Region>(std::move(*r));
    reply(0, reinterpret_cast<uint64_t>(region_->base()));
    return;
  }
  case MsgType::Symbols: {
    // What remote images link against: helpers by id, map iteration, and
    // the libcalls LLVM may emit.
    Message out = Message::of(MsgType::Reply, ReplyMsg{0, 0, 0});
    auto add = [&](const std::string &name, const void *addr) {
      append_named_value(out.payload, name, reinterpret_cast<uint64_t>(addr));
    };
    const auto &by_id = helpers_.by_id();
    for (size_t id = 0; id < by_id.size(); id++)
      if (by_id[id])
        add(jit::helper_symbol(static_cast<int32_t>(id)),
            reinterpret_cast<const void *>(by_id[id]));
    add(jit::kMapIterateSymbol,
        reinterpret_cast<const void *>(&ubt_map_iterate));
    // Not libc's: the program may have those hooked (helpers/libcalls.h).
    add("memset", reinterpret_cast<const void *>(&ubt_libcall_memset));
    add("memcpy", reinterpret_cast<const void *>(&ubt_libcall_memcpy));
    add("memmove", reinterpret_cast<const void *>(&ubt_libcall_memmove));
    (void)send(out);
    return;
  }
  case MsgType::AllocCode: {
    AllocCodeMsg a{};
    if (!m.read(a) || a.size == 0 || a.size > (256u << 20)) {
      reply(-EINVAL, 0, "bad code size");
      return;
    }
    size_t align = a.alignment > 4096 ? a.alignment : 4096;
    size_t len = (a.size + align + 4095) & ~size_t(4095);
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      reply(-ENOMEM, 0, "cannot map code memory");
      return;
    }
    uint64_t at =
        (reinterpret_cast<uint64_t>(p) + align - 1) & ~uint64_t(align - 1);
    code_.push_back({at, a.size, p, len});
    reply(0, at);
    return;
  }
  case MsgType::Code: {
    CodeMsg c{};
    if (!m.read(c)) {
      reply(-EINVAL, 0, "malformed code message");
      return;
    }
    size_t len = m.payload.size() - sizeof c;
    bool known = false;
    for (const auto &b : code_)
      known |= c.address == b.at && len <= b.size;
    if (!known) {
      reply(-EINVAL, 0, "code for memory the agent did not reserve");
      return;
    }
    std::memcpy(reinterpret_cast<void *>(c.address),
                m.payload.data() + sizeof c, len);
    uint64_t page = c.address & ~uint64_t(4095);
    size_t span = ((c.address + len + 4095) & ~uint64_t(4095)) - page;
    if (mprotect(reinterpret_cast<void *>(page), span, PROT_READ | PROT_EXEC) !=
        0) {
      reply(-errno, 0, "cannot make code executable");
      return;
    }
    reply(0);
    return;
  }
  case MsgType::Program: {
    auto id = add_program(m);
    if (!id)
      reply(-EINVAL, 0, id.error());
    else
      reply(0, *id);
    return;
  }
  case MsgType::Hook: {
    HookMsg h{};
    if (!m.read(h)) {
      reply(-EINVAL, 0, "malformed hook request");
      return;
    }
    auto ok = add_hook(h);
    if (!ok) {
      reply(-EINVAL, 0, ok.error());
      return;
    }
    // The value says how the site is patched: 1 a jump, 2 a trap.
    auto mode = runtime::hook::hooked_mode(h.address);
    reply(0, !mode ? 0 : *mode == runtime::hook::PatchMode::Jump ? 1 : 2);
    return;
  }
  case MsgType::Profile:
    return add_from<ProfileMsg>(m, "bad Profile message", &Agent::add_profile);
  case MsgType::PerfEvent:
    return add_from<PerfEventMsg>(m, "bad PerfEvent message",
                                  &Agent::add_perf_event);
  case MsgType::Syscall:
    return add_from<SyscallMsg>(m, "bad Syscall message", &Agent::add_syscall);
  case MsgType::Semaphore: {
    SemaphoreMsg s{};
    if (!m.read(s)) {
      reply(-EINVAL, 0, "malformed semaphore request");
      return;
    }
    __atomic_add_fetch(reinterpret_cast<uint16_t *>(s.address), 1,
                       __ATOMIC_SEQ_CST);
    semaphores_.push_back(
        {reinterpret_cast<uint16_t *>(s.address), object_bias_of(s.address)});
    reply(0);
    return;
  }
  case MsgType::GpuChannel:
    if (m.fd < 0) {
      reply(-EINVAL, 0, "no fd with the GPU channel message");
      return;
    }
    set_gpu_channel(OwnedFd::adopt(m.fd));
    reply(0);
    return;
  case MsgType::Go:
    // Reply first: a program that exits right away would take the reply
    // with it.
    reply(0);
    release_waiter();
    return;
  case MsgType::Detach:
    // The CLI has asked for the counters: no exit report after this.
    disarm_exit_report();
    ending_.store(true, std::memory_order_release);
    detach_all();
    reply(0);
    return;
  case MsgType::WatchLibraries: {
    auto ok = watch_libraries();
    if (!ok)
      reply(-EINVAL, 0, ok.error());
    else
      reply(0);
    return;
  }
  case MsgType::Revalidate: {
    Message out = Message::of(MsgType::Reply, ReplyMsg{0, 0, 0});
    for (const ForgottenHook &f : revalidate()) {
      size_t at = out.payload.size();
      out.payload.resize(at + sizeof f);
      std::memcpy(out.payload.data() + at, &f, sizeof f);
    }
    (void)send(out);
    return;
  }
  case MsgType::Procfs: {
    // Kept for the session (owned_fd.h); a descriptor that is not procfs is
    // refused.
    struct statfs fs{};
    bool procfs =
        m.fd >= 0 && fstatfs(m.fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    OwnedFd fd = OwnedFd::adopt(m.fd);
    if (!procfs || !fd.valid()) {
      fd.close();
      reply(-EINVAL, 0, "no procfs descriptor");
      return;
    }
    runtime::hook::MemoryMap::use_procfs(fd.get());
    // Its payload: whether the CLI runs in the initial PID namespace
    // (absent from an older CLI: taken as not).
    uint8_t initial = 0;
    (void)m.read(initial);
    runtime::helpers::use_pid_view(-1, false);
    procfs_.close();
    procfs_ = std::move(fd);
    runtime::helpers::use_pid_view(procfs_.get(), initial != 0);
    reply(0);
    return;
  }
  case MsgType::UnloadDone:
  case MsgType::LibraryDone: {
    uint32_t ticket = 0;
    (void)m.read(ticket);
    // The thread in dlopen/dlclose goes on with the modules' rows current.
    refresh_unwind();
    acknowledge_ticket(m.type == MsgType::LibraryDone ? g_loads : g_unloads,
                       ticket);
    reply(0);
    return;
  }
  case MsgType::Stats: {
    Message out = Message::of(MsgType::Reply, ReplyMsg{0, 0, 0});
    uint8_t counters[kEncodedCountersMax];
    size_t n = encode_session_counters(counters);
    out.payload.insert(out.payload.end(), counters, counters + n);
    (void)send(out);
    return;
  }
  case MsgType::Hello:
  case MsgType::Reply:
  case MsgType::Library:
  case MsgType::Counters:
  case MsgType::Unloaded:
  case MsgType::Follow:
  case MsgType::Exec:
  // GPU messages travel on the GPU channel (runtime/agent/gpu), not here.
  case MsgType::GpuHello:
  case MsgType::GpuSetup:
  case MsgType::GpuSync:
  case MsgType::GpuClear:
  case MsgType::GpuStats:
  case MsgType::GpuNotice:
  case MsgType::GpuKernels:
    reply(-EINVAL, 0, "unexpected message");
    return;
  }
  reply(-EINVAL, 0, "unknown message");
}

void Agent::serve() {
  // Wakes up now and then even with nothing to read: a program that closed
  // the channel's descriptor (close_range at its start, say) is noticed
  // within a second and the agent goes quiet, instead of holding the hooks
  // of a session nobody can reach. The receive checks the descriptor is
  // still ours around each system call.
  constexpr int kOwnershipCheckMs = 1000;
  // While profiling, threads no pthread_create wrapper saw are looked for
  // every 100 ms, those started under a seccomp filter every 20 (profile.h).
  constexpr int kProfileWakeMs = 20;
  constexpr int kProfileRescanMs = 100;
  for (;;) {
    bool sampling = profile::active() || perf::active() || syscalls::active();
    auto m = recv_message(sock_, sampling ? kProfileWakeMs : kOwnershipCheckMs);
    if (profile::active())
      profile::rescan(kProfileRescanMs);
    if (perf::active())
      perf::check(kProfileRescanMs);
    // System call sites served by the dispatch handler since the last
    // wake go on the fast path (syscalls.h).
    if (syscalls::active())
      syscalls::rewrite_sites(&site_facts);
    if (!m && m.error() == kChannelTimedOut)
      continue;
    if (!m)
      break; // the CLI is gone, or the channel is not ours any more
    // Only Region, GpuChannel and Procfs carry a descriptor; any other is
    // closed, being ours.
    if (m->fd >= 0 && m->type != MsgType::Region &&
        m->type != MsgType::GpuChannel && m->type != MsgType::Procfs) {
      OwnedFd::adopt(m->fd).close();
      m->fd = -1;
    }
    handle(*m);
  }
  // The CLI died or closed the channel, or the program took the channel's
  // descriptor: the target runs on, untraced. A descriptor that is not ours
  // any more is left alone (close() checks).
  disarm_exit_report();
  disarm_raw_notices();
  ending_.store(true, std::memory_order_release);
  detach_all();
  release_waiter();
  sock_.close();
  set_gpu_channel(OwnedFd()); // one the GPU runtime did not take: unused
}

// One session at a time: the agent of the CLI tracing the process now.
pthread_mutex_t g_session_lock = PTHREAD_MUTEX_INITIALIZER;

// The GPU channel the CLI passed (GpuChannel), until the GPU runtime takes
// it at the process's first CUDA code load (runtime/agent/gpu).
pthread_mutex_t g_gpu_channel_lock = PTHREAD_MUTEX_INITIALIZER;
OwnedFd g_gpu_channel;

void set_gpu_channel(OwnedFd fd) {
  pthread_mutex_lock(&g_gpu_channel_lock);
  g_gpu_channel.close();
  g_gpu_channel = std::move(fd);
  pthread_mutex_unlock(&g_gpu_channel_lock);
}

void *serve_thread(void *arg) {
  auto *agent = static_cast<Agent *>(arg);
  agent->serve();
  // Hooks are gone (serve ends with detach_all): another CLI may attach.
  pthread_mutex_lock(&g_session_lock);
  g_agent = nullptr;
  pthread_mutex_unlock(&g_session_lock);
  agent->release_memory();
  // A spawned target's constructor may still be leaving wait_go(): that
  // (one per process) agent stays.
  if (!agent->spawned())
    delete agent;
  return nullptr;
}

// What hooks, helpers and fault-safe reads need before the first hit, set
// up off the probe path (so that a first hit takes no lock: runtime/hook/
// thread_state.h, runtime/helpers/process_facts.h, safe_copy.h).
void prepare_probe_path() {
  (void)runtime::hook::prepare_hooks();
  // Traps need SIGTRAP kept out of the program's masks: the preload does
  // that, interposed by LD_PRELOAD (-c) or through the program's GOT (-p)
  // (runtime/hook/trap_safety.h, got_interpose.h).
  bool guarded =
      runtime::helpers::signals_interposed() || interpose_loaded_objects();
  runtime::hook::set_trap_guard(guarded, true);
  runtime::helpers::prepare_process_facts();
  runtime::helpers::arm_safe_copy();
  if (runtime::helpers::sandboxed())
    notice_sandbox(false);
}

// 0: a session started on `sock`; 1: another one runs (the CLI is told);
// -1: it could not start.
int start_session(OwnedFd sock, bool spawned) {
  prepare_probe_path();
  pthread_mutex_lock(&g_session_lock);
  // A session on its way out (its CLI just ended; removing the hooks takes
  // milliseconds, more on a loaded machine) is waited for, up to 3 s: a
  // ubtrace started right after another must not be told the process is
  // traced already.
  for (int waited = 0; g_agent && g_agent->ending() && waited < 300; ++waited) {
    pthread_mutex_unlock(&g_session_lock);
    usleep(10000);
    pthread_mutex_lock(&g_session_lock);
  }
  if (g_agent) {
    pthread_mutex_unlock(&g_session_lock);
    send_busy(sock);
    sock.close();
    return 1;
  }
  // A forked child must not keep (or write to) the channel of its parent.
  forget_owned_fds_after_fork();
  auto *agent = new Agent(std::move(sock), spawned);
  if (!agent->hello(spawned)) {
    pthread_mutex_unlock(&g_session_lock);
    agent->close_channel();
    delete agent;
    return -1;
  }
  g_agent = agent;
  reset_tickets(g_loads);
  reset_tickets(g_unloads);
  arm_raw_notices(agent->channel_fd());
  start_session_counters();
  arm_exit_report();
  if (!start_agent_thread(serve_thread, agent)) {
    disarm_exit_report();
    disarm_raw_notices();
    g_agent = nullptr;
    pthread_mutex_unlock(&g_session_lock);
    agent->close_channel();
    delete agent;
    return -1;
  }
  pthread_mutex_unlock(&g_session_lock);
  if (spawned)
    agent->wait_go();
  return 0;
}

} // namespace

void notice_sandbox(bool all_threads) {
  runtime::helpers::set_sandboxed();
  runtime::maps::thread_slots_sandboxed();
  profile::sandboxed(all_threads);
}

// ---- GPU (runtime/agent/gpu): the maps region device maps are read back
// into, once the CLI has sent it (null before, or when not traced).
runtime::maps::Region *agent_region() {
  return g_agent ? g_agent->region() : nullptr;
}
OwnedFd agent_take_gpu_channel() {
  pthread_mutex_lock(&g_gpu_channel_lock);
  OwnedFd fd = std::move(g_gpu_channel);
  pthread_mutex_unlock(&g_gpu_channel_lock);
  return fd;
}
} // namespace ubtrace::agent

// Called by libubtrace_preload.so's constructor. That library depends on
// this one, so the loader has run all of this library's initialisers (the
// hook and map libraries' globals) before the call: a spawned target can
// wait here for Go with everything ready. Injected agents start through
// ubtrace_agent_inject instead (the constructor runs only at the first
// injection; a later CLI finds the library loaded). Returns 1 when a
// session started: the preload then passes the agent on to what the
// process execs as UBTRACE_FOLLOW's scope says (preload_exec.c).
extern "C" __attribute__((visibility("default"))) int ubtrace_agent_start() {
  using namespace ubtrace::agent;
  // The command itself (-c): its channel is inherited. Should its
  // initialisers have closed that, it dials the CLI as what it execs would.
  bool command = getenv(kFdEnv) != nullptr;
  int sock = spawned_channel();
  if (sock < 0)
    sock = follow_channel(command); // or a program it became, or its tree's
  if (sock < 0)
    return 0; // not spawned by ubtrace (injected, or exec'd untraced)
  // A session that does not start leaves the program untraced, and what
  // it execs too.
  if (start_session(OwnedFd::adopt(sock), true) == 0)
    return 1;
  unsetenv(kFollowEnv);
  return 0;
}

// Called by libubtrace_preload.so's exec functions before they exec:
// tells the CLI (MsgType::Exec), from whichever thread execs, without
// libc (raw_notice.h; a probe may sit on any libc function).
extern "C" __attribute__((visibility("default"))) void
ubtrace_agent_exec_notice(const char *path) {
  const char *name = path;
  for (const char *c = path; c && *c; ++c)
    if (*c == '/')
      name = c + 1;
  size_t len = 0;
  while (name && name[len] && len < ubtrace::agent::kRawNoticeMax)
    ++len;
  (void)ubtrace::agent::send_raw_notice(ubtrace::agent::MsgType::Exec,
                                        reinterpret_cast<const uint8_t *>(name),
                                        len);
}

// The injector's entry (runtime/inject InjectOptions::entry_symbol): connect
// to the CLI that injected us, named by `argument` (protocol.h's
// AttachArgument). Returns start_session's result, or the kInject* code of
// why no session started.
extern "C" __attribute__((visibility("default"))) int
ubtrace_agent_inject(const char *argument) {
  int sock = ubtrace::agent::attach_channel(argument);
  if (sock < 0)
    return sock;
  return ubtrace::agent::start_session(ubtrace::agent::OwnedFd::adopt(sock),
                                       false);
}

// Called by libubtrace_preload.so's sigaction() and signal() for SIGTRAP,
// SIGILL, SIGSEGV, SIGBUS and the profiling signal: once the hooks' trap
// handlers and the fault-safe reads' handlers are in, the program's handler is
// chained behind them instead of replacing them
// (runtime/helpers/signal_chain.h). 1: done here; 0: the caller asks the
// kernel.
extern "C" __attribute__((visibility("default"))) int
ubtrace_filter_sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old) {
  using namespace ubtrace;
  bool answered = (sig == SIGSEGV || sig == SIGBUS)
                      ? runtime::helpers::filter_fault_sigaction(sig, act, old)
                      : (agent::profile::filter_sigaction(sig, act, old) ||
                         agent::syscalls::filter_sigaction(sig, act, old) ||
                         runtime::hook::filter_trap_sigaction(sig, act, old));
  if (!answered)
    return 0;
  // No rt_sigaction reached the kernel, yet the program made one: system
  // call probes see it, with the arguments the kernel's would have had.
  agent::syscalls::signals::KernelAction kact{}, kold{};
  if (act) {
    kact.handler = reinterpret_cast<uint64_t>(act->sa_handler);
    constexpr uint64_t kRestorer = 0x04000000; // libc's sigaction sets it
    kact.flags = uint64_t(unsigned(act->sa_flags)) | kRestorer;
    kact.restorer = reinterpret_cast<uint64_t>(act->sa_restorer);
    std::memcpy(&kact.mask, &act->sa_mask, sizeof kact.mask);
  }
  if (old) {
    kold.handler = reinterpret_cast<uint64_t>(old->sa_handler);
    kold.flags = uint64_t(unsigned(old->sa_flags));
    kold.restorer = reinterpret_cast<uint64_t>(old->sa_restorer);
    std::memcpy(&kold.mask, &old->sa_mask, sizeof kold.mask);
  }
  const long args[6] = {sig,
                        act ? reinterpret_cast<long>(&kact) : 0,
                        old ? reinterpret_cast<long>(&kold) : 0,
                        sizeof kact.mask,
                        0,
                        0};
  agent::syscalls::answered(SYS_rt_sigaction, args, 0);
  return 1;
}

// The preload's masks and pthread_create: the profiling signal (0: none), and
// a new thread of the program's, before its start routine
// (runtime/agent/profile.h).
extern "C" __attribute__((visibility("default"))) int ubtrace_profile_signal() {
  return ubtrace::agent::profile::signal_number();
}
// The preload's masks: SIGSYS while system calls are traced (0: none).
extern "C" __attribute__((visibility("default"))) int ubtrace_syscall_signal() {
  return ubtrace::agent::syscalls::blocked_signal();
}
extern "C" __attribute__((visibility("default"))) void
ubtrace_thread_started() {
  ubtrace::agent::profile::thread_started();
}

// The preload interposes sigaction() (LD_PRELOAD, -c): no need to ask the
// kernel whether our handlers are still in (runtime/helpers/safe_copy.h).
extern "C" __attribute__((visibility("default"))) void
ubtrace_signals_interposed() {
  ubtrace::runtime::helpers::set_signals_interposed();
}

// The preload was dlopened (-p): its interposers, for the program's GOT
// (runtime/agent/got_interpose.h).
extern "C" __attribute__((visibility("default"))) void
ubtrace_offer_interposers(const ubtrace::agent::Interposer *table,
                          size_t count) {
  ubtrace::agent::offer_interposers(table, count);
}

// The program is about to install a seccomp filter (the preload saw
// prctl(PR_SET_SECCOMP) or syscall(SYS_seccomp)); all_threads: with
// SECCOMP_FILTER_FLAG_TSYNC, on every thread of the process.
extern "C" __attribute__((visibility("default"))) void
ubtrace_sandboxed(int all_threads) {
  ubtrace::agent::notice_sandbox(all_threads != 0);
}
