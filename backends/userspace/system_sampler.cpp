// System-wide sampling (see system_sampler.h).
#include "backends/userspace/system_sampler.h"

#include "backends/loss_report.h"
#include "backends/userspace/foreign_task.h"
#include "backends/userspace/probe_name_ids.h"
#include "backends/userspace/process_pins.h"
#include "runtime/abi.h"
#include "runtime/file_text.h"
#include "runtime/helpers/process_facts.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <unordered_map>

namespace ubtrace::backends {
namespace {

// perf's x86 register numbers (asm/perf_regs.h) in the order a sample
// carries them, and where each goes in pt_regs. DS, ES, FS and GS (12-15)
// are not sampled on x86-64.
struct RegSlot {
  int perf;
  size_t offset;
};
constexpr RegSlot kRegs[] = {
    {0, offsetof(abi::PtRegsLayout, rax)},
    {1, offsetof(abi::PtRegsLayout, rbx)},
    {2, offsetof(abi::PtRegsLayout, rcx)},
    {3, offsetof(abi::PtRegsLayout, rdx)},
    {4, offsetof(abi::PtRegsLayout, rsi)},
    {5, offsetof(abi::PtRegsLayout, rdi)},
    {6, offsetof(abi::PtRegsLayout, rbp)},
    {7, offsetof(abi::PtRegsLayout, rsp)},
    {8, offsetof(abi::PtRegsLayout, rip)},
    {9, offsetof(abi::PtRegsLayout, eflags)},
    {10, offsetof(abi::PtRegsLayout, cs)},
    {11, offsetof(abi::PtRegsLayout, ss)},
    {16, offsetof(abi::PtRegsLayout, r8)},
    {17, offsetof(abi::PtRegsLayout, r9)},
    {18, offsetof(abi::PtRegsLayout, r10)},
    {19, offsetof(abi::PtRegsLayout, r11)},
    {20, offsetof(abi::PtRegsLayout, r12)},
    {21, offsetof(abi::PtRegsLayout, r13)},
    {22, offsetof(abi::PtRegsLayout, r14)},
    {23, offsetof(abi::PtRegsLayout, r15)},
};
constexpr uint64_t reg_mask() {
  uint64_t m = 0;
  for (const auto &r : kRegs)
    m |= uint64_t(1) << r.perf;
  return m;
}

// The instruction pointer alone: it brings the sample's ABI word (a
// 32-bit task's call numbers are others) at a fraction of what all the
// registers cost the traced program.
constexpr uint64_t kIpOnly = uint64_t(1) << 8;

// Whether the program reads the sampled registers (reg(), usym(reg("ip")),
// a helper handed the context).
bool reads_regs(const vm::BoundProgram &program) {
  return program.reads_ctx(0, abi::kPtRegsSize);
}

// Whether some path of the program calls get_stack (ustack, and stacks in
// printf).
bool reads_stack(const vm::BoundProgram &program) {
  return program.calls_helper(BPF_FUNC_get_stack);
}

constexpr size_t kRingPages = 64; // per CPU and event: 256 KiB
// System calls come far more often than samples: 1 MiB.
constexpr size_t kSyscallRingPages = 256;

// The id of tracepoint `event` of the kernel's raw_syscalls category, from
// tracefs.
Result<uint64_t> raw_syscalls_id(const std::string &event) {
  std::string why;
  for (const char *root :
       {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    auto text =
        read_file(std::string(root) + "/events/raw_syscalls/" + event + "/id");
    if (text)
      return std::strtoull(text->c_str(), nullptr, 10);
    if (why.empty())
      why = text.error();
  }
  return make_error(
      "system-wide system call probes count on the kernel's "
      "raw_syscalls:" +
      event + " tracepoint, whose id tracefs did not give (" + why +
      "): they need root and tracefs mounted (mount -t tracefs nodev "
      "/sys/kernel/tracing); or name a process with -c or -p, whose system "
      "calls are traced from inside it");
}

} // namespace

struct SystemSampler::Impl final : TaskNames {
  const runtime::Bundle &bundle;
  UserSymbols &symbols;
  BackendHost &host;

  // One event of the bundle: its probes, in script order, and its ring on
  // every CPU.
  struct Event {
    uint32_t type = 0;
    uint64_t config = 0;
    uint64_t period = 0;
    std::vector<size_t> probes; // bundle indexes
    std::vector<const vm::BoundProgram *> programs;
    struct Ring {
      int fd = -1;
      void *base = nullptr;
    };
    std::vector<Ring> rings;
    // raw_syscalls:sys_enter or sys_exit, which every system call probe
    // of the script shares: for each of `probes`, the call it runs at and
    // the id `probe` reads there.
    bool syscall = false, exit = false;
    // Whether a probe reads the user stack: the kernel walks it for each
    // sample only then.
    bool stacks = false;
    // Whether a probe reads, signals or asks /proc of the sampled
    // process: its samples' processes are pinned only then.
    bool acts = false;
    // The user registers each sample carries: all of them only where a
    // probe reads them (a system call's exit, whose arguments are the
    // registers the call kept, among them).
    uint64_t regs = kIpOnly;
    void add(size_t probe, const vm::BoundProgram *program) {
      probes.push_back(probe);
      programs.push_back(program);
      stacks |= reads_stack(*program);
      acts |= acts_on_process(*program);
      if (reads_regs(*program))
        regs = reg_mask();
    }
    struct Site {
      const runtime::SyscallSite *site;
      uint64_t probe_id;
    };
    std::vector<Site> sites;
    size_t pages() const { return syscall ? kSyscallRingPages : kRingPages; }
    // The kernel's filter: only the calls some probe runs at ("" all).
    std::string filter() const {
      std::set<int32_t> nrs;
      for (const auto &s : sites) {
        if (s.site->nr < 0)
          return "";
        nrs.insert(s.site->nr);
      }
      std::string f;
      for (int32_t nr : nrs)
        f += (f.empty() ? "id == " : " || id == ") + std::to_string(nr);
      return f;
    }
  };
  std::vector<Event> events;
  std::map<std::string, vm::BoundProgram> bound; // by section
  size_t page = 0;
  uint32_t max_stack = 127;

  // Threads' names by tid, from the kernel's records (fork, comm, exec)
  // in time order. After a loss (the lost records may have been names) a
  // kept name is `stale`: /proc is asked again, and where the thread is
  // gone the kept name stays, its last. What an exited thread (and, with
  // its leader, its process) said is dropped a drain later: a sample of
  // it may still come from another CPU's ring.
  struct KnownName {
    std::array<char, 16> text{};
    uint64_t epoch = 0; // names_epoch when known
    bool exited = false;
  };
  std::unordered_map<uint32_t, KnownName> comms;
  uint64_t names_epoch = 1;
  struct Exited {
    uint32_t tid;
    bool leader; // the process's facts go too (forget_process)
  };
  std::vector<Exited> exited, exited_before; // this drain's, the last's
  ProcessPins pins;                          // the sampled processes
  // When each process's mappings were last snapshotted (symbols), and
  // how often again for an address none mapped.
  struct Snapshotted {
    uint64_t at = 0;
    uint32_t redone = 0;
  };
  std::unordered_map<uint32_t, Snapshotted> snapshotted;
  const uint32_t own_pid = uint32_t(getpid());
  uint64_t lost = 0, failed = 0, unrun = 0;
  // The kernel says how many samples of an event it could not write
  // (PERF_FORMAT_LOST, Linux 6.0): exact, where its PERF_RECORD_LOST
  // records come only with the next sample that fits, and not at all when
  // none follows (the last burst of a trace). Older kernels: the records.
  bool lost_readable = true;
  uint64_t lost_at_detach = 0;

  // The samples the kernel lost in every ring still open, by read().
  uint64_t kernel_lost() const {
    uint64_t sum = 0;
    for (const auto &e : events)
      for (const auto &r : e.rings) {
        uint64_t values[2] = {}; // the count, then the lost samples
        if (r.fd >= 0 && read(r.fd, values, sizeof values) == sizeof values)
          sum += values[1];
      }
    return sum;
  }
  uint64_t lost_samples() const {
    if (!lost_readable)
      return lost;
    return std::max({lost, kernel_lost(), lost_at_detach}); // closed: 0
  }
  // When the kept names were last dropped for a loss (CLOCK_MONOTONIC ns).
  uint64_t names_dropped_at = 0;
  bool failure_said = false;

  Impl(const runtime::Bundle &b, UserSymbols &s, BackendHost &h)
      : bundle(b), symbols(s), host(h) {}

  ~Impl() { close_all(); }

  void close_all() {
    for (auto &e : events)
      for (auto &r : e.rings) {
        if (r.base)
          munmap(r.base, (e.pages() + 1) * page);
        if (r.fd >= 0)
          close(r.fd);
        r = {};
      }
  }

  // A thread's name: as the kernel's records said, else from /proc once;
  // for a thread gone before it was asked, the name it had last, else its
  // process's (a thread starts with the name of the one that made it).
  void name(uint32_t pid, uint32_t tid, uint32_t cpu, char out[16]) override {
    if (tid == 0)
      return TaskNames::name(pid, tid, cpu, out);
    auto it = comms.find(tid);
    if (it == comms.end() || it->second.epoch != names_epoch) {
      std::array<char, 16> read{};
      TaskNames::name(pid, tid, cpu, read.data());
      if (read[0] == 0 && it != comms.end())
        read = it->second.text;
      else if (read[0] == 0 && pid != tid && pid != 0)
        name(pid, pid, cpu, read.data());
      if (comms.size() > 65536)
        comms.clear();
      KnownName &known = comms[tid];
      known.text = read;
      known.epoch = names_epoch;
      it = comms.find(tid);
    }
    std::memcpy(out, it->second.text.data(), 16);
  }

  // A name the kernel's records gave (fork, comm).
  void set_name(uint32_t tid, const char (&text)[16]) {
    KnownName &known = comms[tid];
    std::memcpy(known.text.data(), text, 16);
    known.epoch = names_epoch;
    known.exited = false;
  }

  // After a drain: what threads that exited during the one before said
  // goes; a name only if its number did not come back since.
  void forget_exited() {
    for (const Exited &x : exited_before) {
      if (auto it = comms.find(x.tid); it != comms.end() && it->second.exited)
        comms.erase(it);
      if (x.leader) {
        forget_process(x.tid);
        pins.forget(x.tid);
      }
    }
    exited_before.swap(exited);
    exited.clear();
  }

  std::string why_not(int err, uint32_t type) const {
    if (type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP))
      return "this machine has no hardware performance counters the kernel "
             "can use (a virtual machine without a virtual PMU, say)";
    if (err == EACCES || err == EPERM) {
      auto level = read_file("/proc/sys/kernel/perf_event_paranoid");
      std::string l = level ? *level : "?";
      while (!l.empty() && (l.back() == '\n' || l.back() == ' '))
        l.pop_back();
      return "watching every CPU needs root or CAP_PERFMON "
             "(kernel.perf_event_paranoid is " +
             l +
             "; at 0 or lower anyone may), or name a process with -c or "
             "-p, whose own threads need no privilege";
    }
    if (err == EMFILE || err == ENFILE)
      return "no file descriptor left for it";
    if (err == ENOSYS)
      return "this kernel has no perf events";
    return std::strerror(err);
  }

  Result<void> open_event(Event &e, bool side_band) {
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    const std::string filter = e.syscall ? e.filter() : "";
    for (uint32_t cpu = 0; cpu < uint32_t(std::max(1L, ncpu)); cpu++) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = e.type;
      attr.config = e.config;
      attr.sample_period = e.period;
      attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                         PERF_SAMPLE_CPU | PERF_SAMPLE_REGS_USER |
                         (e.stacks ? PERF_SAMPLE_CALLCHAIN : 0) |
                         (e.syscall ? PERF_SAMPLE_RAW : 0);
      attr.sample_regs_user = e.regs;
      attr.exclude_callchain_kernel = 1;
      attr.sample_max_stack = static_cast<uint16_t>(max_stack);
      attr.disabled = 1;
      attr.exclude_hv = 1;
      attr.use_clockid = 1;
      attr.clockid = CLOCK_MONOTONIC;
      attr.watermark = 1;
      attr.wakeup_watermark = uint32_t(e.pages() * page / 2);
      // Names and ends of threads, from the first event only.
      attr.comm = side_band;
      attr.comm_exec = side_band;
      attr.task = side_band;
      attr.sample_id_all = 1;
      attr.read_format = lost_readable ? PERF_FORMAT_LOST : 0;
      long fd = syscall(SYS_perf_event_open, &attr, -1, int(cpu), -1,
                        PERF_FLAG_FD_CLOEXEC);
      if (fd < 0 && errno == EINVAL && lost_readable) {
        lost_readable = false; // before Linux 6.0
        attr.read_format = 0;
        fd = syscall(SYS_perf_event_open, &attr, -1, int(cpu), -1,
                     PERF_FLAG_FD_CLOEXEC);
      }
      if (fd < 0) {
        int err = errno;
        if (err == ENODEV && cpu > 0)
          continue; // offline
        return make_error(why_not(err, e.type));
      }
      // Without the kernel's filter every call still reaches the probes'
      // own check, at a higher cost.
      if (!filter.empty())
        (void)ioctl(int(fd), PERF_EVENT_IOC_SET_FILTER, filter.c_str());
      void *base = mmap(nullptr, (e.pages() + 1) * page, PROT_READ | PROT_WRITE,
                        MAP_SHARED, int(fd), 0);
      if (base == MAP_FAILED) {
        int err = errno;
        close(int(fd));
        return make_error(std::string("cannot map a perf event's ring: ") +
                          std::strerror(err));
      }
      e.rings.push_back({int(fd), base});
    }
    return {};
  }

  // A record taken out of a ring, to be handled in time order with those
  // of the other CPUs (a thread renamed on one CPU may be sampled on
  // another right after).
  struct Taken {
    uint64_t time;
    size_t seq; // in its ring's order, for records of one time
    Event *event;
    size_t at, size; // header and body, in `bytes`
  };
  std::vector<Taken> taken;
  std::vector<uint8_t> bytes;  // the records taken, one after another
  std::vector<uint64_t> chain; // a sample's user call chain

  // Copies `len` bytes at `tail` of a ring (which may wrap) to `out`.
  static void copy_out(const uint8_t *data, uint64_t size, uint64_t tail,
                       size_t len, uint8_t *out) {
    uint64_t off = tail % size;
    size_t first = std::min<uint64_t>(len, size - off);
    std::memcpy(out, data + off, first);
    std::memcpy(out + first, data, len - first);
  }

  // The samples among taken[from...], which will not be run.
  void count_unrun(size_t from) {
    for (size_t k = from; k < taken.size(); k++) {
      perf_event_header h;
      std::memcpy(&h, bytes.data() + taken[k].at, sizeof h);
      if (h.type == PERF_RECORD_SAMPLE)
        unrun++;
    }
  }

  // Takes every record of one ring, and frees its space.
  void read_ring(Event &e, Event::Ring &r) {
    auto *meta = static_cast<perf_event_mmap_page *>(r.base);
    const auto *data = static_cast<const uint8_t *>(r.base) + page;
    const uint64_t size = e.pages() * page;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    while (tail + sizeof(perf_event_header) <= head) {
      perf_event_header h;
      copy_out(data, size, tail, sizeof h, reinterpret_cast<uint8_t *>(&h));
      if (h.size < sizeof h || tail + h.size > head)
        break;
      Taken t{0, taken.size(), &e, bytes.size(), h.size};
      bytes.resize(bytes.size() + h.size);
      uint8_t *record = bytes.data() + t.at;
      copy_out(data, size, tail, h.size, record);
      // A sample's time follows its ip and ids; every other record ends
      // with the sample id (sample_id_all): ids, time, cpu.
      size_t at = h.type == PERF_RECORD_SAMPLE ? sizeof h + 16 : h.size - 16;
      if (at + 8 <= h.size && at >= sizeof h)
        std::memcpy(&t.time, record + at, 8);
      taken.push_back(std::move(t));
      tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }

  // Reads every ring into `taken`.
  void read_rings() {
    for (auto &e : events)
      for (auto &r : e.rings)
        if (r.base)
          read_ring(e, r);
  }

  // Reads every ring into `taken` and pins the processes of the samples
  // read (process_pins.h), then reads again while that pinned any, so
  // that the records from before each pin are in hand when its samples
  // are handled (at most 4 times; a pin made at the last has only its
  // /proc start to bound it).
  void take_all() {
    pins.next_pass();
    size_t from = taken.size();
    read_rings();
    std::vector<uint32_t> pids;
    for (int pass = 0;; pass++) {
      // The beginnings first: the rings are not in time order.
      for (size_t k = from; k < taken.size(); k++)
        note_beginning(taken[k]);
      if (pass == 4)
        return;
      pids.clear();
      for (size_t k = from; k < taken.size(); k++) {
        perf_event_header h;
        const uint8_t *record = bytes.data() + taken[k].at;
        std::memcpy(&h, record, sizeof h);
        uint32_t pid = 0; // after the ip
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 12)
          std::memcpy(&pid, record + sizeof h + 8, 4);
        if (pid != 0 && pid != own_pid && taken[k].event->acts)
          pids.push_back(pid);
      }
      std::sort(pids.begin(), pids.end());
      pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
      pids.erase(
          std::remove_if(pids.begin(), pids.end(),
                         [&](uint32_t pid) { return !pins.needs_pin(pid); }),
          pids.end());
      if (pids.empty())
        return;
      for (uint32_t pid : pids)
        pins.pin(pid);
      from = taken.size();
      read_rings();
    }
  }

  // A process (fork, pid == tid) or image (exec) that began.
  void note_beginning(const Taken &t) {
    perf_event_header h;
    const uint8_t *record = bytes.data() + t.at;
    std::memcpy(&h, record, sizeof h);
    uint32_t ids[3] = {}; // fork: pid, ppid, tid; comm: pid, tid
    if (h.size < sizeof h + sizeof ids)
      return;
    std::memcpy(ids, record + sizeof h, sizeof ids);
    if (h.type == PERF_RECORD_FORK && ids[0] == ids[2])
      pins.began(ids[0], t.time, true);
    else if (h.type == PERF_RECORD_COMM &&
             (h.misc & PERF_RECORD_MISC_COMM_EXEC))
      pins.began(ids[0], t.time, false);
  }

  // Handles one record; false once a probe called exit().
  bool handle(Event &e, const perf_event_header &h, const uint8_t *p,
              size_t len) {
    auto take = [&](void *dst, size_t n) {
      if (n > len)
        return false;
      if (n) // an empty call chain has no buffer
        std::memcpy(dst, p, n);
      p += n;
      len -= n;
      return true;
    };
    switch (h.type) {
    case PERF_RECORD_LOST: {
      uint64_t id_lost[2];
      if (take(id_lost, sizeof id_lost))
        lost += id_lost[1];
      // The lost records may have been names (a thread's exec): the names
      // kept may be stale, so each is asked of /proc again - at most
      // every 200 ms, since under a sustained loss lost records come
      // with every read, and reading every thread's name again each time
      // would slow the CLI into more loss.
      if (uint64_t now = runtime::helpers::clock_ns(CLOCK_MONOTONIC);
          now - names_dropped_at >= 200'000'000) {
        names_dropped_at = now;
        names_epoch++;
      }
      return true;
    }
    case PERF_RECORD_COMM: {
      uint32_t ids[2];
      if (!take(ids, sizeof ids))
        return true;
      char name[16] = {};
      std::memcpy(name, p, std::min<size_t>(len, 15));
      set_name(ids[1], name);
      return true;
    }
    case PERF_RECORD_FORK: {
      // A new thread or process is named as its parent thread was.
      uint32_t ids[4]; // pid, ppid, tid, ptid
      if (take(ids, sizeof ids) && ids[3] != 0) {
        char parent[16];
        name(ids[1], ids[3], 0, parent); // the parent is likely alive
        set_name(ids[2], parent);
      }
      return true;
    }
    case PERF_RECORD_EXIT: {
      // The numbers may come back for others: what they said is
      // forgotten, a drain later (forget_exited).
      uint32_t ids[4]; // pid, ppid, tid, ptid
      if (take(ids, sizeof ids)) {
        if (auto it = comms.find(ids[2]); it != comms.end())
          it->second.exited = true;
        exited.push_back({ids[2], ids[0] == ids[2]});
      }
      return true;
    }
    case PERF_RECORD_SAMPLE:
      break;
    default:
      return true;
    }
    ForeignTask s;
    s.names = this;
    uint64_t ip = 0, nr = 0, abi_kind = 0;
    uint32_t cpu_res[2] = {};
    uint32_t ids[2] = {};
    if (!take(&ip, 8) || !take(ids, 8) || !take(&s.time, 8) ||
        !take(cpu_res, 8))
      return true;
    s.pid = ids[0];
    s.tid = ids[1];
    s.cpu = cpu_res[0];
    s.memory = pid_t(s.pid);
    if (s.pid != 0 && s.pid != own_pid && e.acts)
      s.pin = pins.of(s.pid, s.time);
    chain.clear();
    if (e.stacks) {
      if (!take(&nr, 8) || nr > len / 8)
        return true;
      // Only the user part (the kernel's is excluded), after its marker.
      for (uint64_t k = 0; k < nr; k++) {
        uint64_t a;
        take(&a, 8);
        if (a < PERF_CONTEXT_MAX)
          chain.push_back(a);
      }
    }
    s.chain = chain.data();
    s.chain_len = chain.size();
    const uint8_t *raw = nullptr; // the tracepoint's record
    uint32_t raw_size = 0;
    if (e.syscall) {
      if (!take(&raw_size, 4) || raw_size > len)
        return true;
      raw = p;
      p += raw_size;
      len -= raw_size;
    }
    abi::HostProbeCtx ctx{};
    if (take(&abi_kind, 8) && abi_kind != PERF_SAMPLE_REGS_ABI_NONE) {
      for (const auto &slot : kRegs) {
        uint64_t v = 0;
        if (!(e.regs & (uint64_t(1) << slot.perf)))
          continue;
        if (!take(&v, 8))
          break;
        std::memcpy(reinterpret_cast<uint8_t *>(&ctx.regs) + slot.offset, &v,
                    8);
      }
    }
    // raw_syscalls' records: the common fields, the number at 8, then
    // the six arguments (sys_enter) or the result (sys_exit) at 16.
    int64_t call = 0, ret = -ENOSYS;
    uint64_t args[6] = {};
    if (e.syscall) {
      // The CLI's own calls (its reads for the probes would feed back).
      if (s.pid == own_pid || s.pid == 0 || raw_size < (e.exit ? 24 : 64))
        return true;
      std::memcpy(&call, raw + 8, 8);
      if (e.exit) {
        std::memcpy(&ret, raw + 16, 8);
        // A system call leaves its argument registers as they were.
        const auto &r = ctx.regs;
        const uint64_t kept[6] = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
        std::memcpy(args, kept, sizeof args);
      } else {
        std::memcpy(args, raw + 16, sizeof args);
      }
    }
    // The process's addresses print as symbols after it is gone; a
    // process or image new under the number since its last snapshot adds
    // its own mappings (an address resolves through the newest that maps
    // it), and so does one taken again when a call chain holds an
    // address no snapshot taken before the sample maps (a library mapped
    // since: the first may come from the loader's first calls); past
    // three such, at most once a second (JIT code maps no file).
    if (s.pid != 0) {
      if (snapshotted.size() > 65536)
        snapshotted.clear();
      Snapshotted &last = snapshotted[s.pid];
      auto &runtime_symbols = symbols.runtime();
      const uint64_t now = runtime::helpers::clock_ns(CLOCK_MONOTONIC);
      bool again = !runtime_symbols.has_snapshot(pid_t(s.pid)) ||
                   pins.image_began(s.pid) > last.at;
      if (!again && !chain.empty() && last.at < s.time &&
          (last.redone < 3 || now - last.at >= 1'000'000'000) &&
          std::any_of(
              chain.begin(), chain.end(),
              [&](uint64_t a) {
                return !runtime_symbols.maps_file(pid_t(s.pid), a);
              })) {
        again = true;
        last.redone++;
      }
      if (again) {
        (void)runtime_symbols.snapshot(pid_t(s.pid));
        last.at = now;
      }
    }
    for (size_t k = 0; k < e.probes.size(); k++) {
      ctx.probe_id = e.probes[k];
      if (e.syscall) {
        const auto &site = *e.sites[k].site;
        // A named call is x86-64's: a 32-bit task's numbers are others.
        if (site.nr >= 0 &&
            (site.nr != call || abi_kind == PERF_SAMPLE_REGS_ABI_32))
          continue;
        fill_syscall_ctx(ctx, site, args, call, ret);
        ctx.probe_id = e.sites[k].probe_id;
      }
      vm::RunResult res = run_for(s, *e.programs[k], &ctx);
      if (res.status != vm::RunStatus::Ok) {
        failed++;
        if (!failure_said) {
          failure_said = true;
          host.runtime_error(std::string(vm::describe(res.status)) + " in " +
                             bundle.probes[e.probes[k]].name + " at PC " +
                             std::to_string(res.stop_pc));
        }
      }
      host.drain_events();
      if (host.exiting())
        return false;
    }
    return true;
  }
};

SystemSampler::SystemSampler(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SystemSampler::~SystemSampler() = default;

Result<std::unique_ptr<SystemSampler>>
SystemSampler::create(const runtime::Bundle &bundle, const ProgramSet &programs,
                      UserSymbols &symbols, BackendHost &host,
                      std::vector<std::string> &probe_names) {
  ProbeNameIds ids(&probe_names);
  auto impl = std::make_unique<Impl>(bundle, symbols, host);
  impl->page = size_t(sysconf(_SC_PAGESIZE));
  // The kernel refuses a longer call chain than its sysctl allows.
  if (auto text = read_file("/proc/sys/kernel/perf_event_max_stack"))
    impl->max_stack = std::clamp<uint32_t>(
        uint32_t(std::strtoul(text->c_str(), nullptr, 10)), 1, 127);
  for (size_t i = 0; i < bundle.probes.size(); i++) {
    const auto &spec = bundle.probes[i];
    if (!samples(spec.kind))
      continue;
    // A profile probe (and software:cpu-clock/task-clock) is the CPU's
    // clock; on a CPU, task-clock is cpu-clock.
    uint32_t type = spec.kind == runtime::ProbeKind::Profile
                        ? uint32_t(PERF_TYPE_SOFTWARE)
                        : spec.perf_type;
    uint64_t config = spec.kind == runtime::ProbeKind::Profile
                          ? uint64_t(PERF_COUNT_SW_CPU_CLOCK)
                          : spec.perf_config;
    uint64_t period = std::max<uint64_t>(spec.interval_ns, 1);
    auto bound = impl->bound.find(spec.section);
    if (bound == impl->bound.end()) {
      auto b = bind_foreign(programs, spec.section);
      if (!b)
        return make_error("cannot bind the program of " + spec.name + ": " +
                          b.error());
      bound = impl->bound.emplace(spec.section, std::move(*b)).first;
    }
    if (spec.kind == runtime::ProbeKind::Syscall) {
      for (const auto &site : spec.syscalls) {
        auto e = std::find_if(impl->events.begin(), impl->events.end(),
                              [&](const Impl::Event &x) {
                                return x.syscall && x.exit == site.exit;
                              });
        if (e == impl->events.end()) {
          auto id = raw_syscalls_id(site.exit ? "sys_exit" : "sys_enter");
          if (!id)
            return make_error(spec.name + ": " + id.error());
          Impl::Event fresh;
          fresh.type = PERF_TYPE_TRACEPOINT;
          fresh.config = *id;
          fresh.period = 1;
          fresh.syscall = true;
          fresh.exit = site.exit;
          impl->events.push_back(std::move(fresh));
          e = impl->events.end() - 1;
        }
        e->add(i, &bound->second);
        e->sites.push_back({&site, ids.of(i, spec, site)});
        if (site.exit &&
            std::any_of(site.sources.begin(), site.sources.end(),
                        [](int8_t from) { return from >= 0 && from < 6; }))
          e->regs = reg_mask(); // arguments read at the exit
      }
      continue;
    }
    auto same = std::find_if(impl->events.begin(), impl->events.end(),
                             [&](const Impl::Event &e) {
                               return !e.syscall && e.type == type &&
                                      e.config == config && e.period == period;
                             });
    if (same == impl->events.end()) {
      Impl::Event fresh;
      fresh.type = type;
      fresh.config = config;
      fresh.period = period;
      impl->events.push_back(std::move(fresh));
      same = impl->events.end() - 1;
    }
    same->add(i, &bound->second);
  }
  return std::unique_ptr<SystemSampler>(new SystemSampler(std::move(impl)));
}

Result<size_t> SystemSampler::attach() {
  size_t probes = 0;
  for (size_t k = 0; k < impl_->events.size(); k++) {
    auto &e = impl_->events[k];
    if (auto ok = impl_->open_event(e, k == 0); !ok) {
      impl_->close_all();
      return make_error(impl_->bundle.probes[e.probes.front()].name + ": " +
                        ok.error());
    }
    probes += e.probes.size();
  }
  return probes;
}

void SystemSampler::start() {
  for (auto &e : impl_->events)
    for (auto &r : e.rings)
      ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
}

void SystemSampler::drain() {
  auto &taken = impl_->taken;
  taken.clear();
  impl_->bytes.clear();
  impl_->take_all();
  std::sort(taken.begin(), taken.end(), [](const auto &a, const auto &b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  });
  for (size_t k = 0; k < taken.size(); k++) {
    const uint8_t *record = impl_->bytes.data() + taken[k].at;
    perf_event_header h;
    std::memcpy(&h, record, sizeof h);
    if (!impl_->handle(*taken[k].event, h, record + sizeof h,
                       taken[k].size - sizeof h)) {
      impl_->count_unrun(k + 1); // exit(): the rest is not run
      break;
    }
  }
  taken.clear();
  impl_->forget_exited();
}

void SystemSampler::detach() {
  for (auto &e : impl_->events)
    for (auto &r : e.rings)
      if (r.fd >= 0)
        ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
  // What the kernel wrote since the last read is not run: counted.
  impl_->taken.clear();
  impl_->bytes.clear();
  impl_->read_rings();
  impl_->count_unrun(0);
  impl_->taken.clear();
  if (impl_->lost_readable)
    impl_->lost_at_detach = impl_->kernel_lost();
  impl_->close_all();
}

agent::NamedValues SystemSampler::losses() const {
  return {{kSampleLost, impl_->lost_samples()},
          {kSampleFailed, impl_->failed},
          {kSampleUnrun, impl_->unrun},
          {kSampleReadGone, foreign_reads_gone()}};
}

} // namespace ubtrace::backends
