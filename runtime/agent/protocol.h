// The channel between the CLI and the in-target agent: a SOCK_SEQPACKET
// unix socket (message boundaries kept, file descriptors passed alongside).
// The CLI sends requests, the agent answers each with a Reply; the agent
// may also send notices (a library loaded) at any time.
//
// How the agent finds the channel, and knows it is its own CLI's:
//   -c CMD  the CLI spawns CMD with UBTRACE_AGENT_FD=<fd of its end of a
//           socketpair> and LD_PRELOAD=<agent>; the agent's constructor
//           takes the descriptor only if it is a SOCK_SEQPACKET socket whose
//           peer (SO_PEERCRED) is its parent, and waits for Go, so hooks are
//           in place before main.
//   -p PID  the CLI listens on an abstract socket whose name nobody can
//           predict ("@ubtrace-agent.<PID>.<128 random bits>") and injects
//           the agent; the injector calls kInjectEntry with an
//           AttachArgument naming the socket and the CLI's pid and uid. The
//           agent connects there and talks only if the listener's
//           credentials (SO_PEERCRED) are that pid and uid; the CLI accepts
//           only the target's pid. A name derived from the pid alone could
//           be bound first by any local user (blocking -p), or answered by
//           them.
//   --follow (with -c) the CLI also listens as for -p and gives the command
//           UBTRACE_FOLLOW=<token> <scope> <filters> <AttachArgument>,
//           where the token is 128 random bits, the scope "tree" (or the
//           command's own execs: preload_exec.c), and <filters> the CLI's
//           seccomp filters (cli_link.cpp: a program under more is left
//           alone). The preload then keeps its LD_PRELOAD entry, so
//           every program the command's tree execs loads the agent; that
//           agent connects there (a listener of the CLI's pid, or of pid 0
//           when the CLI's pid namespace is not visible from the program's,
//           and of the CLI's uid either way), sends Follow with the token
//           first, then Hello as a spawned agent does, and waits for Go.
//           The CLI takes a connection only with the token: the listener's
//           name is visible to anyone in /proc/net/unix, the token only to
//           those who may read the tree's environments (who may ptrace it).
// Nothing else is ever connected to by name: the GPU channel travels as a
// descriptor on this one (MsgType::GpuChannel), and only when the script
// has GPU probes.
#pragma once

#include "runtime/agent/owned_fd.h"
#include "runtime/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::agent {

inline constexpr uint32_t kProtocolVersion = 4;
inline constexpr const char *kFdEnv = "UBTRACE_AGENT_FD";
// -c and --follow: "<32 hex digits> <scope> <filters> <encoded
// AttachArgument>" (see above).
inline constexpr const char *kFollowEnv = "UBTRACE_FOLLOW";
inline constexpr size_t kFollowTokenHex = 32;
// + pid + "." + random hex, abstract
inline constexpr const char *kSocketPrefix = "ubtrace-agent.";
// What the injector calls after dlopen (-p): `int (const char *)` with an
// encoded AttachArgument; its results below.
inline constexpr const char *kInjectEntry = "ubtrace_agent_inject";
inline constexpr int kInjectStarted = 0;      // a session started
inline constexpr int kInjectBusy = 1;         // another CLI traces the process
inline constexpr int kInjectNoCli = -2;       // nothing listens at the address
inline constexpr int kInjectBadArgument = -3; // not an AttachArgument
inline constexpr int kInjectWrongPeer = -4;   // the listener is not that CLI
inline constexpr int kInjectFailed = -1;      // the session could not start

// -p: the entry's argument. The agent connects to `address` and speaks only
// to a listener whose SO_PEERCRED is (cli_pid, cli_uid), as the agent's
// process sees them: cli_pid 0 is a CLI outside the process's PID
// namespace (a container's process, traced from the host).
struct AttachArgument {
  std::string address; // "@name" (abstract) or a path
  uint32_t cli_pid = 0;
  uint32_t cli_uid = 0;
};
std::string encode_attach_argument(const AttachArgument &a);
// False for anything encode_attach_argument did not make.
bool parse_attach_argument(const char *text, AttachArgument *out);

enum class MsgType : uint32_t {
  // agent -> CLI
  Hello = 1,    // HelloMsg
  Reply = 2,    // ReplyMsg, then an error text when status != 0
  Library = 3,  // a u32 ticket, then the path of a library the target just
                // loaded; the loading thread waits (bounded) for
                // LibraryDone with that ticket, so probes in the library are
                // hooked before its functions can run
  Counters = 4, // the session's loss counters (named_values.h), sent once
                // as the process exits (exit(), return from main)
  Unloaded = 5, // a dlclose() returned: libraries may be gone (payload: a
                // u32 ticket); the thread waits (bounded) for UnloadDone
                // with that ticket, the CLI having had the agent drop what
                // is gone (Revalidate) and watch for its return
  // CLI -> agent
  Region = 10,    // the maps region: its fd travels with the message, and
                  // a u64 may ask for an address (taken if free, so that
                  // processes alike share one native code); the reply's
                  // value is where the agent mapped it
  Program = 11,   // a verified program (program_wire.h)
  Hook = 12,      // HookMsg; reply value: 1 patched with a jump, 2 with a trap
  Semaphore = 13, // SemaphoreMsg: a USDT semaphore to enable
  Go = 14,        // setup done: let the target run
  Detach = 15,    // remove every hook; the agent then goes quiet
  Stats = 16,     // after the ReplyMsg, the session's loss counters
                  // (named_values.h; agent_counters.h names them)
  WatchLibraries = 17, // report libraries loaded from now on (Library)
  LibraryDone = 18, // u32 ticket: the CLI has hooked what that Library needed
  Symbols = 19,     // the reply lists the agent's helper addresses (below)
  AllocCode = 20,   // AllocCodeMsg; the reply's value is the address
  Code = 21,        // CodeMsg, then the machine code to place there
  GpuChannel = 22,  // the GPU channel's agent end travels with it (below)
  Revalidate = 23,  // drop the hooks whose code is gone (its library was
                    // unloaded); the reply lists them as ForgottenHook
  UnloadDone = 24,  // u32 ticket of the Unloaded handled
  Procfs = 25,      // the CLI's /proc (its fd travels with the message): the
                    // agent reads its own mappings through it, also once
                    // the process has chroot()ed where there is no /proc,
                    // and its threads' numbers as the CLI sees them; a u8:
                    // the CLI runs in the initial PID namespace
  Profile = 26,     // ProfileMsg: sample every thread (profile.h); the
                    // reply's value: threads armed, and in its high 32
                    // bits those of them blocking the signal now
  Syscall = 27,     // SyscallMsg: run a program at a system call (syscalls.h);
                    // the reply's value: threads dispatching, and in its
                    // high 32 bits those left alone (blocking SIGSYS)
  PerfEvent = 28,   // PerfEventMsg: sample a perf event of every thread
                    // (perf_events.h); the reply's value: threads given
                    // it
  Follow = 29,      // agent -> CLI, first on a --follow connection: the
                    // token of UBTRACE_FOLLOW (32 hex digits)
  Exec = 30,        // agent -> CLI, a raw notice: the process is about to
                    // exec the file named (its last path component; empty
                    // when it is a descriptor), so a hangup after it is an
                    // exec, and what the program is called

  // ---- GPU channel (runtime/agent/gpu) ----
  // A second socket, one end of a socketpair the CLI's GPU backend makes
  // for a script with GPU probes and passes in a GpuChannel message (before
  // Go): the agent greets on it when the target first asks the CUDA driver
  // to load code, so device readbacks (which wait for the GPU) never hold up
  // hook requests on the first channel. Without it, nothing on the GPU is
  // traced (the agent never looks for a CLI by name: anyone could answer).
  GpuHello = 40,  // agent -> CLI: HelloMsg
  GpuSetup = 41,  // CLI -> agent: gpu_wire.h's GpuSetup
  GpuSync = 42,   // CLI -> agent: read device maps back, drain the ring
  GpuClear = 43,  // CLI -> agent: GpuClearMsg
  GpuStats = 44,  // the reply carries GpuStatsMsg
  GpuNotice = 45, // agent -> CLI: a warning to print, as text
  // agent -> CLI: the mangled names of kernels it instrumented that it has
  // not named before, each followed by a NUL; the CLI names `func` of
  // kernels from modules it could not read at start-up (a dlopen'ed
  // library, a module loaded from memory).
  GpuKernels = 46,
};

// clear()/zero() of a map that lives on the GPU too.
struct GpuClearMsg {
  uint32_t map;  // index in the bundle's maps
  uint32_t zero; // 1: zero() (keep keys); 0: clear()
};

struct GpuStatsMsg {
  uint64_t modules_seen;         // images the driver was asked to load
  uint64_t modules_instrumented; // handed over rewritten
  uint64_t modules_without_ptx;  // SASS only: their kernels run unprobed
  uint64_t modules_failed;       // could not be rewritten (a notice says why)
  uint64_t kernels_instrumented;
  uint64_t launches;    // cuLaunchKernel(Ex) calls seen
  uint64_t readbacks;   // device map copies into the region
  uint64_t events;      // device ring records forwarded
  uint64_t events_lost; // dropped on the device (ring full)
};

struct MsgHeader {
  uint32_t type;
  uint32_t size; // of the payload after the header
};

struct HelloMsg {
  uint32_t version;
  uint32_t pid;
  uint32_t waiting; // 1: the target waits for Go (it was just spawned)
  uint32_t busy;    // 1: another CLI traces this process; the agent hangs up
};

struct ReplyMsg {
  int32_t status; // 0 or -errno-like
  uint32_t pad;
  uint64_t value; // request-specific (e.g. a program's id)
};

enum class HookKind : uint32_t { Entry = 0, Return = 1 };

// How to read one USDT argument at a site (from its stapsdt note).
struct UsdtArgWire {
  enum Kind : uint8_t { None = 0, Constant = 1, Register = 2, Memory = 3 };
  uint8_t kind;
  uint8_t size; // 1, 2, 4 or 8 bytes
  uint8_t is_signed;
  uint8_t reg;       // pt_regs index (runtime/abi.h order) of the register
                     // (Register) or the base (Memory, when has_base)
  uint8_t reg_width; // bytes of the register read (eax: 4)
  uint8_t high_byte; // %ah and friends
  uint8_t has_base;
  uint8_t has_index;
  uint8_t index_reg;
  uint8_t scale;
  uint8_t pad[6];
  int64_t value; // Constant: the value; Memory: the displacement
};

// HookMsg flags.
// A return probe's program reads the function's entry arguments: the hook
// keeps them, the agent puts them where USDT arguments go (abi.h).
inline constexpr uint32_t kHookEntryArgs = 1;

struct HookMsg {
  uint64_t address; // where to hook, in the target
  uint64_t func_start;
  uint64_t func_size;    // 0 if unknown
  uint64_t probe_id;     // ctx.probe_id
  uint64_t func_ip;      // ctx.func_ip (the probed function)
  uint32_t program;      // id from the Program reply
  uint32_t kind;         // HookKind
  uint32_t usdt_nargs;   // USDT sites: how many of usdt_args are read
  uint32_t flags;        // kHook* below
  uint64_t native_entry; // the program's JIT'd entry in this process; 0:
                         // run the program in the interpreter
  UsdtArgWire usdt_args[12];
};

// A profile probe: its program runs on every thread every period_ns of
// that thread's CPU time (runtime/agent/profile.h).
struct ProfileMsg {
  uint64_t period_ns;
  uint64_t probe_id; // ctx.probe_id
  uint32_t program;  // id from the Program reply
  uint32_t pad;
  uint64_t native_entry; // the program's JIT'd entry; 0: interpret
};

// A software:/hardware: probe: its program runs on a thread every `count`
// events of that thread (runtime/agent/perf_events.h).
struct PerfEventMsg {
  uint32_t type; // perf_event_attr's type and config
  uint32_t program;
  uint64_t config;
  uint64_t count;
  uint64_t probe_id;     // ctx.probe_id
  uint64_t native_entry; // the program's JIT'd entry; 0: interpret
  uint32_t in_kernel;    // 1: count the kernel's part too
  uint32_t pad;
  uint64_t period; // of the event: the gcd of its probes' counts
  // perf_event_attr's config1 and config2: a breakpoint's bp_addr and
  // bp_len (config is its bp_type).
  uint64_t config1;
  uint64_t config2;
};

// A system call probe: its program runs at system call `nr` (-1: every
// one) of every thread, at the entry or the exit; `args[i]` says what ctx
// argument slot i holds there (a register, or the constant 0).
struct SyscallMsg {
  uint64_t probe_id;     // ctx.probe_id
  uint64_t native_entry; // the program's JIT'd entry; 0: interpret
  uint32_t program;      // id from the Program reply
  int32_t nr;
  uint32_t exit;
  uint32_t nargs;
  UsdtArgWire args[12];
};

// Native code the CLI linked for this process (runtime/jit remote images):
// the agent reserves memory, the CLI links the image for that address.
struct AllocCodeMsg {
  uint64_t size;
  uint64_t alignment;
};
struct CodeMsg {
  uint64_t address; // from AllocCode
};

// The Symbols reply: after the ReplyMsg, entries of
//   u32 name length, the name (runtime/jit/remote_symbols.h names), u64
//   address.

// The Revalidate reply: after the ReplyMsg, one per hook dropped.
struct ForgottenHook {
  uint64_t address;
  uint32_t kind; // HookKind
  uint32_t pad;
};

struct SemaphoreMsg {
  uint64_t address; // of the u16 semaphore in the target
};

// One message: header, payload and optionally a file descriptor.
struct Message {
  MsgType type;
  std::vector<uint8_t> payload;
  int fd = -1;

  template <class T> static Message of(MsgType t, const T &pod) {
    Message m{t, {}, -1};
    m.payload.resize(sizeof(T));
    __builtin_memcpy(m.payload.data(), &pod, sizeof(T));
    return m;
  }
  template <class T> bool read(T &pod) const {
    if (payload.size() < sizeof(T))
      return false;
    __builtin_memcpy(&pod, payload.data(), sizeof(T));
    return true;
  }
  // The first message of an agent that dialled the CLI (--follow, -c's
  // execs, a -c command whose channel was closed): its UBTRACE_FOLLOW
  // token, which only a program of the traced tree knows.
  bool follows_with(const std::string &token) const {
    return type == MsgType::Follow &&
           std::string(payload.begin(), payload.end()) == token;
  }
};

// Sends one message (and its fd when >= 0). Retries on EINTR.
Result<void> send_message(int sock, const Message &m);
// Receives one message; `timeout_ms` < 0 waits forever. A closed channel is
// the error kChannelClosed, a timeout kChannelTimedOut. This is the CLI's
// side: a descriptor that comes with a message is closed (the agent sends
// none).
Result<Message> recv_message(int sock, int timeout_ms = -1);
inline constexpr const char *kChannelClosed = "channel closed";
inline constexpr size_t kMaxQueuedNotices = 4096;
inline constexpr const char *kChannelTimedOut =
    "timed out waiting on the agent channel";
inline constexpr const char *kChannelLost =
    "the program closed or reused the agent's descriptor";

// The agent's side: the same, on a descriptor the program may take away
// (owned_fd.h). Each system call on it is preceded by usable(), and what a
// receive read after the number changed hands is dropped (with any
// descriptor it carried): kChannelLost, and the OwnedFd is lost().
Result<void> send_message(OwnedFd &sock, const Message &m);
Result<Message> recv_message(OwnedFd &sock, int timeout_ms = -1);

// A request and its reply, from the CLI's side, within `timeout_ms` in all.
// Notices that arrive while it waits (Library) are appended to `notices`
// when given, up to kMaxQueuedNotices (more is a misbehaving peer: dropped).
Result<ReplyMsg> request(int sock, const Message &m, std::string *error_text,
                         int timeout_ms = 10000,
                         std::vector<Message> *notices = nullptr);
// The same, with the whole Reply message (its payload after the ReplyMsg:
// a request's data); each other message that comes first goes to
// `on_notice` (dropped if null).
using NoticeSink = std::function<void(Message &&)>;
Result<Message> request_reply(int sock, const Message &m, int timeout_ms,
                              const NoticeSink &on_notice);

} // namespace ubtrace::agent
