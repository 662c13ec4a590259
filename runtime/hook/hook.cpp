#include "runtime/hook/hook.h"

#include "runtime/hook/code_memory.h"
#include "runtime/hook/code_patcher.h"
#include "runtime/hook/cpu_features.h"
#include "runtime/hook/cpu_sync.h"
#include "runtime/hook/return_trampoline.h"
#include "runtime/hook/site.h"
#include "runtime/hook/thread_pool.h"
#include "runtime/hook/trampoline.h"
#include "runtime/hook/trap_bytes.h"
#include "runtime/hook/trap_handler.h"
#include "runtime/hook/trap_safety.h"
#include "runtime/hook/trap_table.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

std::mutex g_lock;
// By requested address; erased only by forget_hook (the Site stays).
// Never destroyed: the agent's thread may install (system call sites) while
// the program's exit() runs the static destructors. Made at the first use,
// not by a static initialiser: that would be the process's first malloc
// (getrandom, brk), made among the -c command's own calls
// (runtime/inject/loader_calls.h).
std::map<uint64_t, Site *> &sites() {
  static std::map<uint64_t, Site *> *made = new std::map<uint64_t, Site *>;
  return *made;
}
bool g_initialized = false;
bool g_masks_guarded = false;
bool g_guard_required = false;
uint64_t g_patches_left_in = 0;

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Result<void> initialize(const MemoryMap &map) {
  if (g_initialized)
    return {};
  const CpuFeatures &cpu = cpu_features();
  if (!init_thread_pool())
    return make_error("cannot map the hook thread-state pool");
  Result<void> r = init_return_code(cpu, map);
  if (!r)
    return r;
  sync_cores(); // registers with membarrier early; fails quietly if absent
  g_initialized = true;
  return {};
}

// The process's mappings, with what every install needs set up first
// (under g_lock).
Result<MemoryMap> map_for_install() {
  Result<MemoryMap> map = MemoryMap::read_self();
  if (!map)
    return map;
  if (Result<void> ready = initialize(*map); !ready)
    return std::move(ready).take_error();
  if (Result<void> traps = install_trap_handlers(); !traps)
    return std::move(traps).take_error();
  return map;
}

// A site whose patch (or requested address) overlaps [start, end), if any.
const Site *overlapping(uint64_t start, uint64_t end) {
  for (const auto &[address, site] : sites()) {
    uint64_t s = std::min(site->plan.address, site->plan.patch_start);
    uint64_t e = site->plan.patch_start + site->patch_len;
    if (start < e && s < end)
      return site;
  }
  return nullptr;
}

// Where the trampoline of a Jump plan may lie: the rel32 jump into it and
// its relocated [rip] operands must all reach.
void reach_window(const PatchPlan &plan, uint32_t size, CodeRequest &req) {
  constexpr int64_t kReach = INT32_MAX - (1 << 20); // margin for the size
  auto clip = [&](uint64_t anchor) {
    uint64_t lo = anchor > static_cast<uint64_t>(kReach)
                      ? anchor - kReach + size
                      : kLowestMappable;
    uint64_t hi = anchor + kReach - size;
    req.lo = std::max(req.lo, lo);
    req.hi = std::min(req.hi, hi);
  };
  clip(plan.patch_start + kJumpSize);
  for (uint32_t i = 0; i < plan.insn_count; ++i)
    if (plan.insns[i].rip_relative)
      clip(plan.insns[i].memory_target);
}

Result<void> build_jump_site(Site &site, const MemoryMap &map) {
  const PatchPlan &plan = site.plan;
  const CpuFeatures &cpu = cpu_features();
  // Measure the trampoline once at a nearby address; far branches in the
  // relocated code can make the real one larger, hence the slack.
  uint32_t ignored = 0;
  CodeBuffer measure(plan.patch_start);
  Result<void> measured = emit_entry_trampoline(measure, site, cpu, ignored);
  if (!measured)
    return measured;
  uint32_t size = static_cast<uint32_t>(measure.size()) + 48;

  CodeRequest req;
  req.size = size;
  req.near = plan.patch_start;
  req.rel_base = plan.patch_start + kJumpSize;
  for (uint32_t k = 1; k < plan.insn_count; ++k) {
    uint64_t offset = plan.insns[k].address - plan.patch_start;
    if (offset < kJumpSize)
      req.constraint.mask |= static_cast<uint8_t>(1u << (offset - 1));
  }
  reach_window(plan, size, req);
  Result<uint64_t> at = allocate_code(req, map);
  if (!at)
    return std::move(at).take_error();

  CodeBuffer code(*at);
  uint32_t displaced_offset = 0;
  Result<void> emitted =
      emit_entry_trampoline(code, site, cpu, displaced_offset);
  if (!emitted)
    return emitted;
  if (code.size() > size)
    return make_error("trampoline outgrew its block");
  Result<void> written = write_code(*at, code.data(), code.size());
  if (!written)
    return written;
  site.trampoline = *at;
  site.displaced_code = *at + displaced_offset;

  // The patch: jmp rel32, then the rest of the displaced bytes with every
  // former instruction start made an int3.
  uint64_t rel = *at - (plan.patch_start + kJumpSize);
  site.patch_len = plan.displaced_bytes;
  site.patched[0] = 0xE9;
  for (int j = 0; j < 4; ++j)
    site.patched[1 + j] = static_cast<uint8_t>(rel >> (8 * j));
  for (uint32_t i = kJumpSize; i < site.patch_len; ++i)
    site.patched[i] = site.original[i];
  for (uint32_t k = 1; k < plan.insn_count; ++k) {
    uint32_t offset =
        static_cast<uint32_t>(plan.insns[k].address - plan.patch_start);
    if (offset >= kJumpSize)
      site.patched[offset] = kInt3;
    if (!is_trap_byte(site.patched[offset]))
      return make_error("internal: trampoline placed without a trap byte at "
                        "an instruction start");
  }
  return {};
}

Result<void> build_trap_site(Site &site, const MemoryMap &map) {
  const PatchPlan &plan = site.plan;
  CodeBuffer measure(plan.patch_start);
  Result<void> measured = emit_out_of_line(measure, site);
  if (!measured)
    return measured;
  CodeRequest req;
  req.size = static_cast<uint32_t>(measure.size()) + 48;
  req.near = plan.patch_start;
  reach_window(plan, req.size, req);
  Result<uint64_t> at = allocate_code(req, map);
  if (!at)
    return make_error("cannot place the out-of-line copy of " +
                      hex(plan.patch_start) + ": " + at.error());
  CodeBuffer code(*at);
  Result<void> emitted = emit_out_of_line(code, site);
  if (!emitted)
    return emitted;
  Result<void> written = write_code(*at, code.data(), code.size());
  if (!written)
    return written;
  site.displaced_code = *at;
  site.patch_len = 1;
  site.patched[0] = kInt3;
  return {};
}

Result<void> register_traps(Site &site) {
  const PatchPlan &plan = site.plan;
  if (!trap_table_add(plan.patch_start, TrapKind::SiteEntry, kInt3,
                      site.trampoline, &site))
    return make_error("the hook trap table is full");
  if (plan.mode == PatchMode::Trap)
    return {};
  for (uint32_t k = 1; k < plan.insn_count; ++k) {
    uint64_t at = plan.insns[k].address;
    uint8_t byte = site.patched[at - plan.patch_start];
    if (!trap_table_add(at, TrapKind::Boundary, byte,
                        site.displaced_code + site.starts[k], &site))
      return make_error("the hook trap table is full");
  }
  return {};
}

// With `syscall`, the patch covers the instruction at `syscall_at`; with
// `syscall_last` too, it ends right after it.
Result<Site *> create_site(uint64_t address, HookKind kind,
                           const HookOptions &options, const MemoryMap &map,
                           const SyscallPath *syscall = nullptr,
                           uint64_t syscall_at = 0, bool syscall_last = false) {
  uint64_t syscall_entry =
      syscall ? reinterpret_cast<uint64_t>(syscall->entry) : 0;
  if (const Site *other = overlapping(address, address + 1))
    return make_error("cannot hook " + hex(address) +
                      ": inside the bytes patched for the hook at " +
                      hex(other->plan.address));
  const CpuFeatures &cpu = cpu_features();
  Result<PatchPlan> plan =
      plan_patch(address, options.function, map, cpu.shadow_stack,
                 syscall_at ? syscall_at + 2 : 0);
  if (!plan)
    return std::move(plan).take_error();
  if (const Site *other = overlapping(plan->patch_start, plan->patch_end())) {
    // A jump would cover the next site (USDT probes a few bytes apart):
    // one int3 byte covers nothing but this instruction.
    std::string why =
        "its patch would overlap the hook at " + hex(other->plan.address);
    if (plan->mode == PatchMode::Trap)
      return make_error("cannot hook " + hex(address) + ": " + why);
    Result<PatchPlan> trap = plan_as_trap(*plan, why, cpu.shadow_stack);
    if (!trap || overlapping(trap->patch_start, trap->patch_end()))
      return make_error("cannot hook " + hex(address) + ": " + why);
    plan = std::move(trap);
  }

  if (syscall_entry && plan->mode != PatchMode::Jump)
    return make_error("cannot rewrite the syscall at " + hex(syscall_at) +
                      ": " + plan->trap_reason);
  if (syscall_entry && syscall_last && plan->patch_end() != syscall_at + 2)
    return make_error("cannot rewrite the syscall at " + hex(syscall_at) +
                      " from " + hex(address) +
                      ": the jump would cover what follows it");
  if (syscall_entry && plan->displaced_bytes > sizeof(Site::original))
    return make_error("cannot rewrite the syscall at " + hex(syscall_at) +
                      ": the instructions around it are too long");
  auto *site = new Site;
  site->plan = std::move(*plan);
  site->lean_return_entry = kind == HookKind::Return;
  site->syscall_entry = syscall_entry;
  site->syscall_address = syscall_at;
  if (syscall) {
    site->syscall_slow = reinterpret_cast<uint64_t>(syscall->slow);
    site->syscall_direct = syscall->direct;
    site->syscall_tls_word = syscall->tls_word_after;
  }
  for (uint32_t i = 0;
       i < site->plan.displaced_bytes && i < sizeof site->original; ++i)
    site->original[i] =
        *reinterpret_cast<const uint8_t *>(site->plan.patch_start + i);
  Result<void> built = {};
  if (site->plan.mode == PatchMode::Jump) {
    built = build_jump_site(*site, map);
    if (!built && syscall_entry) {
      std::string why = "cannot rewrite the syscall at " + hex(syscall_at) +
                        ": " + built.error();
      delete site;
      return make_error(why);
    }
    if (!built) {
      // No trampoline within reach: the int3 path still works.
      Result<PatchPlan> trap =
          plan_as_trap(site->plan, "no trampoline placement: " + built.error(),
                       cpu.shadow_stack);
      if (!trap) {
        delete site;
        return std::move(trap).take_error();
      }
      site->plan = std::move(*trap);
      built = {};
    }
  }
  if (site->plan.mode == PatchMode::Trap) {
    if (!options.allow_trap) {
      std::string why = "cannot patch a jump at " + hex(address) + ": " +
                        site->plan.trap_reason;
      delete site;
      return make_error(why);
    }
    built = build_trap_site(*site, map);
  }
  if (!built) {
    delete site;
    return std::move(built).take_error();
  }
  Result<void> traps = register_traps(*site);
  if (!traps)
    return std::move(traps)
        .take_error(); // the site leaks: its table entries point at it
  sites()[address] = site;
  return site;
}

// A site whose patching or hits take a trap (trap_safety.h): none may go in
// while a thread blocks SIGTRAP or SIGILL.
bool needs_traps(const Site &site) {
  return site.plan.mode == PatchMode::Trap || !patches_atomically(site);
}

Result<void> traps_allowed(const Site &site, uint64_t address) {
  if (site.attached || !needs_traps(site))
    return {};
  const char *why = site.plan.mode == PatchMode::Trap
                        ? "this site would be an int3"
                        : "patching this site takes a transient int3";
  if (g_guard_required && !g_masks_guarded)
    return make_error("cannot hook " + hex(address) +
                      std::string(kUnsafeSiteMarker) + why +
                      ", and without ubtrace's preload (-p) any thread may "
                      "block SIGTRAP, which makes it fatal for that thread");
  TrapBlocker blocker = find_trap_blocker();
  if (!blocker.tid)
    return {};
  return make_error(
      "cannot hook " + hex(address) + std::string(kUnsafeSiteMarker) +
      describe(blocker) +
      (site.plan.mode == PatchMode::Trap
           ? ", and this site would be an int3 (" + site.plan.trap_reason + ")"
           : ", and patching this site takes a transient int3") +
      ", which the kernel makes fatal for that thread");
}

} // namespace

void set_trap_guard(bool masks_guarded, bool guard_required) {
  std::lock_guard<std::mutex> guard(g_lock);
  g_masks_guarded = masks_guarded;
  g_guard_required = guard_required;
}

Result<void> prepare_hooks() {
  if (!init_thread_pool())
    return make_error("cannot map the hook thread-state pool");
  std::lock_guard<std::mutex> guard(g_lock);
  return install_trap_handlers();
}

Result<Patchability> check_patchable(uint64_t address,
                                     FunctionBounds function) {
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = sites().find(address);
  PatchPlan plan;
  if (it != sites().end()) {
    plan = it->second->plan;
  } else {
    Result<MemoryMap> map = MemoryMap::read_self();
    if (!map)
      return std::move(map).take_error();
    if (const Site *other = overlapping(address, address + 1))
      return make_error("cannot hook " + hex(address) +
                        ": inside the bytes patched for the hook at " +
                        hex(other->plan.address));
    Result<PatchPlan> planned =
        plan_patch(address, function, *map, cpu_features().shadow_stack);
    if (!planned)
      return std::move(planned).take_error();
    plan = std::move(*planned);
  }
  Patchability p;
  p.mode = plan.mode;
  p.patch_address = plan.patch_start;
  p.displaced_bytes = plan.displaced_bytes;
  p.trap_reason = plan.trap_reason;
  return p;
}

Result<HookId> install_hook(uint64_t address, HookKind kind, Handler handler,
                            void *user, const HookOptions &options) {
  if (!handler)
    return make_error("install_hook: no handler");
  std::lock_guard<std::mutex> guard(g_lock);
  Result<MemoryMap> map = map_for_install();
  if (!map)
    return std::move(map).take_error();
  if (kind == HookKind::Return) {
    if (cpu_features().shadow_stack)
      return make_error("cannot hook returns: this process runs with a CET "
                        "shadow stack, which forbids replacing return "
                        "addresses");
    if (options.function.size && options.function.start &&
        options.function.start != address)
      return make_error("cannot hook the return of " + hex(address) +
                        ": not the entry of its function");
  }

  Site *site;
  auto it = sites().find(address);
  if (it != sites().end()) {
    site = it->second;
    if (site->plan.mode == PatchMode::Trap && !options.allow_trap)
      return make_error("cannot patch a jump at " + hex(address) + ": " +
                        site->plan.trap_reason);
  } else {
    Result<Site *> created = create_site(address, kind, options, *map);
    if (!created)
      return std::move(created).take_error();
    site = *created;
  }
  const HandlerBinding *&slot =
      kind == HookKind::Entry ? site->bindings.entry : site->bindings.ret;
  if (load_binding(slot))
    return make_error(hex(address) + std::string(" already has ") +
                      (kind == HookKind::Entry ? "an entry" : "a return") +
                      " hook");
  Result<void> safe = traps_allowed(*site, address);
  if (!safe)
    return std::move(safe).take_error();
  bool save = options.vectors == VectorState::Preserve;
  auto *binding = new HandlerBinding{handler, user, save};
  if (kind == HookKind::Entry)
    __atomic_store_n(&site->bindings.save_vectors_on_entry, save ? 1 : 0,
                     __ATOMIC_RELEASE);
  if (kind == HookKind::Return && options.returns_twice)
    __atomic_store_n(&site->bindings.returns_twice, 1, __ATOMIC_RELEASE);
  if (kind == HookKind::Return && options.entry_args)
    __atomic_store_n(&site->bindings.entry_args, 1, __ATOMIC_RELEASE);
  store_binding(slot, binding);
  Result<void> attached = attach_patch(*site, *map);
  if (!attached) {
    store_binding(slot, nullptr);
    wait_for_running_dispatches();
    delete binding;
    return std::move(attached).take_error();
  }
  return HookId{address, kind};
}

namespace {

// The instruction starts of `function` before `address`, nearest first (at
// most `count`), by decoding it from its start; empty if decoding does not
// land on `address`.
std::vector<uint64_t> starts_before(uint64_t address, FunctionBounds function,
                                    const MemoryRegion &region, size_t count) {
  std::vector<uint64_t> starts;
  if (function.start < region.start || address > region.end)
    return {};
  uint64_t pc = function.start;
  while (pc < address) {
    Result<DecodedInsn> in =
        decode_insn(reinterpret_cast<const uint8_t *>(pc), address - pc, pc);
    if (!in)
      return {};
    starts.push_back(pc);
    pc += in->length;
  }
  if (pc != address)
    return {};
  std::reverse(starts.begin(), starts.end());
  if (starts.size() > count)
    starts.resize(count);
  return starts;
}

} // namespace

Result<void> install_syscall_site(uint64_t address, FunctionBounds function,
                                  const SyscallPath &path) {
  if (!path.entry || !path.slow || !path.direct)
    return make_error("install_syscall_site: no entry");
  if (path.tls_word_after != static_cast<int32_t>(path.tls_word_after))
    return make_error("install_syscall_site: the TLS word is out of reach");
  if (!function.size || !function.start)
    return make_error("cannot rewrite the syscall at " + hex(address) +
                      ": its function's bounds are unknown");
  std::lock_guard<std::mutex> guard(g_lock);
  Result<MemoryMap> map = map_for_install();
  if (!map)
    return std::move(map).take_error();
  const auto *code = reinterpret_cast<const uint8_t *>(address);
  const MemoryRegion *region = map->find(address);
  if (!region || address + 2 > region->end || !(region->prot & PROT_READ) ||
      code[0] != 0x0f || code[1] != 0x05)
    return make_error(hex(address) + " holds no syscall instruction");
  HookOptions options;
  options.function = function;
  options.allow_trap = false;
  // The jump goes over what precedes the syscall and the syscall (libc's
  // `mov eax, NR; syscall`), so that threads in the kernel there come
  // back past the patch, onto the code as it was. Only where that cannot
  // be does it cover the syscall and what follows: a thread in the kernel
  // then returns onto a trap byte inside the jump, and the trap handler
  // sends it on (it dies instead if it blocks SIGILL and SIGTRAP: dispatch
  // keeps both out of the masks set while system call probes run).
  std::vector<uint64_t> candidates =
      starts_before(address, function, *region, 4);
  candidates.push_back(address);
  Result<Site *> created = make_error("no candidate");
  std::string first_error;
  for (uint64_t start : candidates) {
    if (auto it = sites().find(start); it != sites().end()) {
      // Rewritten by an earlier session and put back since: patch it again
      // with the trampoline it has.
      Site *old = it->second;
      if (old->syscall_address != address || old->attached)
        continue;
      if (Result<void> safe = traps_allowed(*old, start); !safe)
        return safe;
      return attach_patch(*old, *map);
    }
    created = create_site(start, HookKind::Entry, options, *map, &path, address,
                          start != address);
    if (created)
      break;
    if (first_error.empty())
      first_error = created.error();
  }
  if (!created)
    return make_error(first_error.empty() ? hex(address) + " is hooked already"
                                          : first_error);
  Site *site = *created;
  uint64_t key = site->plan.address;
  if (Result<void> safe = traps_allowed(*site, key); !safe) {
    forget_patch(*site); // never attached; the site stays allocated
    sites().erase(key);
    return safe;
  }
  Result<void> attached = attach_patch(*site, *map);
  if (!attached) {
    forget_patch(*site);
    sites().erase(key);
    return attached;
  }
  return {};
}

Result<void> remove_syscall_site(uint64_t address) {
  std::lock_guard<std::mutex> guard(g_lock);
  Site *site = nullptr;
  for (const auto &[start, s] : sites())
    if (s->syscall_address == address)
      site = s;
  if (!site)
    return make_error(hex(address) + " is not a rewritten syscall");
  if (!site->attached)
    return {};
  // Restoring takes a transient int3 unless it is one atomic store: with a
  // thread blocking SIGTRAP the rewrite stays (its entry then lets the
  // instruction run as before).
  if (!patches_atomically(*site) && find_trap_blocker().tid) {
    ++g_patches_left_in;
    return make_error("left in: a thread blocks SIGTRAP");
  }
  Result<MemoryMap> map = MemoryMap::read_self();
  if (!map)
    return std::move(map).take_error();
  return detach_patch(*site, *map);
}

Result<void> keep_entry_args(uint64_t address) {
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = sites().find(address);
  if (it == sites().end() || !load_binding(it->second->bindings.ret))
    return make_error(hex(address) + " has no return hook");
  __atomic_store_n(&it->second->bindings.entry_args, 1, __ATOMIC_RELEASE);
  return {};
}

Result<void> uninstall_hook(HookId id) {
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = sites().find(id.address);
  if (it == sites().end())
    return make_error(hex(id.address) + " is not hooked");
  Site *site = it->second;
  const HandlerBinding *&slot =
      id.kind == HookKind::Entry ? site->bindings.entry : site->bindings.ret;
  const HandlerBinding *binding = load_binding(slot);
  store_binding(slot, nullptr);
  if (!binding)
    return make_error(hex(id.address) + std::string(" has no ") +
                      (id.kind == HookKind::Entry ? "entry" : "return") +
                      " hook");
  if (id.kind == HookKind::Entry)
    __atomic_store_n(&site->bindings.save_vectors_on_entry, 0,
                     __ATOMIC_RELEASE);
  Result<void> detached = {};
  // Restoring a Jump site that is not patched atomically takes a transient
  // int3: with a thread blocking SIGTRAP the patch stays, unbound (its
  // trampoline just runs the displaced instructions).
  bool keep_patch = site->plan.mode == PatchMode::Jump &&
                    !patches_atomically(*site) && find_trap_blocker().tid;
  bool unbound =
      !load_binding(site->bindings.entry) && !load_binding(site->bindings.ret);
  if (unbound && keep_patch && site->attached)
    ++g_patches_left_in;
  if (unbound && !keep_patch) {
    Result<MemoryMap> map = MemoryMap::read_self();
    if (!map)
      detached = std::move(map).take_error();
    else
      detached = detach_patch(*site, *map);
  }
  // Whatever happened to the bytes, no dispatch may still hold the binding
  // once this returns.
  wait_for_running_dispatches();
  delete binding;
  return detached;
}

Result<void> forget_hook(uint64_t address) {
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = sites().find(address);
  if (it == sites().end())
    return make_error(hex(address) + " is not hooked");
  Site *site = it->second;
  // Bindings are leaked on purpose: a dispatch may still hold one.
  store_binding(site->bindings.entry, nullptr);
  store_binding(site->bindings.ret, nullptr);
  __atomic_store_n(&site->bindings.save_vectors_on_entry, 0, __ATOMIC_RELEASE);
  forget_patch(*site);
  // A new install here plans again from the code it finds. The site stays
  // allocated: threads may be in its trampoline, shadow entries name it.
  sites().erase(it);
  return {};
}

Result<PatchMode> hooked_mode(uint64_t address) {
  std::lock_guard<std::mutex> guard(g_lock);
  auto it = sites().find(address);
  if (it == sites().end())
    return make_error(hex(address) + " is not hooked");
  return it->second->plan.mode;
}

HookStats hook_stats() {
  std::lock_guard<std::mutex> guard(g_lock);
  HookStats s;
  for (const auto &[address, site] : sites()) {
    ++s.sites;
    if (site->attached)
      ++s.attached;
    if (site->plan.mode == PatchMode::Trap)
      ++s.trap_sites;
  }
  ThreadCounters c = thread_counters();
  s.nested_skips = c.nested_skips;
  s.shadow_overflows = c.shadow_overflows;
  s.vector_skips = c.vector_skips;
  s.unwound_entries = c.unwound_entries;
  s.refused_claims = c.refused_claims;
  s.kept_at_exit = c.kept_at_exit;
  s.reaped = c.reaped;
  s.threads_seen = c.threads_seen;
  s.code_bytes = code_memory_mapped_bytes();
  PatchCounts patches = patch_counts();
  s.atomic_patches = patches.atomic;
  s.int3_patches = patches.int3_first;
  s.patches_left_in = g_patches_left_in;
  TrapCounters t = trap_counters();
  s.trap_site_hits = t.trap_site;
  s.patching_traps = t.patching;
  s.boundary_traps = t.boundary;
  s.retried_traps = t.retried;
  s.foreign_traps = t.foreign;
  return s;
}

} // namespace ubtrace::runtime::hook
