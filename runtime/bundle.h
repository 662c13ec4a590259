// The bundle: the one contract between the front end (codegen fills it) and
// the backends (they run it). It holds the BPF object and everything a backend
// needs to run the probes and print what they produce. Serialised with cereal
// so the CLI can hand it to another process unchanged.
#pragma once

#include "runtime/config/config.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ubtrace::runtime {

// What a stored value is, in enough detail to print it. Sizes are in bytes.
struct ValueType {
  enum class Kind : uint8_t {
    None,        // no value (void)
    Integer,     // size 1/2/4/8, is_signed
    Boolean,     // size 1
    Pointer,     // size 8, printed as 0x...
    String,      // NUL-terminated within size bytes
    Buffer,      // u32 length, then size-4 bytes of data (buf())
    Array,       // count elements of fields[0]
    Tuple,       // fields, unnamed, printed "(a, b)"
    Record,      // fields, named, printed "{ .a = 1, .b = 2 }"
    Struct,      // a C struct: fields, named, type_name "struct foo"
    UStack,      // u64 nr, then stack_limit u64 addresses, then u64 pid
    KStack,      // u64 nr, then stack_limit u64 addresses
    USym,        // u64 address + u64 pid (usym(), func in uprobes)
    KSym,        // u64 address
    Inet,        // u64 af, then 16 bytes of address (ntop())
    MacAddr,     // 6 bytes
    Timestamp,   // strftime(): u64 format id, u64 ns
    CgroupPath,  // u64 cgroup id
    StrError,    // i64 errno
    SignalName,  // i64 signal number
    SyscallName, // i64 system call number
    Username,    // u64 uid
    Probe,       // u64 probe id, printed as the probe's name
    Enum,        // integer printed by enum_names where it matches
  };

  struct Field; // defined below: it holds a ValueType by value

  Kind kind = Kind::None;
  uint32_t size = 0;
  bool is_signed = false;
  uint32_t count = 0;        // Array: number of elements
  uint32_t stack_limit = 0;  // UStack/KStack: frames stored
  uint8_t stack_mode = 0;    // 0 bpftrace, 1 perf, 2 raw, 3 build_id
  std::string type_name;     // Struct/Enum: "struct foo"
  std::vector<Field> fields; // Tuple/Record/Struct; Array holds one
  std::map<int64_t, std::string> enum_names;
  // String: a C char[N] whose N characters may all be text (no NUL): it
  // prints without str()'s truncation trailer.
  bool c_chars = false;

  template <class Archive> void serialize(Archive &ar) {
    ar(kind, size, is_signed, count, stack_limit, stack_mode, type_name, fields,
       enum_names, c_chars);
  }
};

struct ValueType::Field {
  std::string name; // empty for tuple elements
  uint32_t offset = 0;
  ValueType type;
  // A C bitfield: `bits` wide, `shift` bits into the type.size bytes at
  // offset (0 bits: not a bitfield).
  uint32_t bitfield_bits = 0, bitfield_shift = 0;
  template <class Archive> void serialize(Archive &ar) {
    ar(name, offset, type, bitfield_bits, bitfield_shift);
  }
};

// How a map's values are aggregated. The storage of an aggregation is split
// in slots (per CPU or per thread) that the CLI merges at print time.
enum class AggKind : uint8_t {
  None,  // plain value (last write wins), printed by its ValueType
  Count, // slot: i64
  Sum,   // slot: i64 (u64 when value.is_signed is false)
  Min,   // slot: { i64 value; u64 is_set }
  Max,   // slot: { i64 value; u64 is_set }
  Avg,   // slot: { i64 total; u64 count }
  Stats, // slot: { i64 total; u64 count }
  Hist,  // slot: u64 counts[hist_buckets(bits)]
  LHist, // slot: u64 counts[lhist_buckets(min, max, step)]
  // slot: TSeriesBucket[tseries_intervals], the bucket of interval E at
  // E % tseries_intervals
  TSeries,
};

// How tseries() combines the values given in one interval.
enum class TSeriesAgg : uint8_t { Last, Avg, Max, Min, Sum };

// One interval of a tseries() slot. `epoch` is the interval's number (its
// start / interval_ns); 0 is an unused bucket. `meta`: Last the time of the
// value, Avg the count, Min/Max 1 once set, Sum unused.
struct TSeriesBucket {
  int64_t value;
  uint64_t meta;
  uint64_t epoch;
};

enum class MapKind : uint8_t {
  Hash,          // bounded hash, preallocated
  LruHash,       // bounded hash evicting least recently used
  PerCpuHash,    // hash whose values are split in slots
  PerCpuLruHash, // both
  Array,         // scalar maps (no key) and small fixed arrays
  PerCpuArray,   // scalar aggregations
  RingBuf,       // the event ring buffer
};

// What a map of the BPF object is for.
enum class MapRole : uint8_t {
  User,       // a map of the script (@x)
  Events,     // the event ring buffer (abi::kEventsMap)
  Scratch,    // per-slot scratch: entry 0 builds events, entry 1 holds large
              // temporaries (abi::kScratchMap)
  Globals,    // abi::Globals (abi::kGlobalsMap)
  ProbeNames, // the probes' names by id (abi::kProbeNamesMap)
};

struct MapSpec {
  std::string name; // "@x", "@" for the anonymous map; the object's map
                    // name for internal maps
  MapRole role = MapRole::User;
  MapKind kind = MapKind::Hash;
  AggKind agg = AggKind::None;
  ValueType key;   // Kind::None for scalar maps
  ValueType value; // the element type (for aggregations: what was passed in)
  uint32_t key_size = 0;
  uint32_t value_size = 0; // bytes of one slot
  uint32_t max_entries = 0;
  std::string object_name; // the map's name in the BPF object
  // hist(n, bits)
  uint32_t hist_bits = 0;
  // lhist(n, min, max, step)
  int64_t lhist_min = 0, lhist_max = 0, lhist_step = 0;
  // tseries(n, interval, intervals[, agg])
  uint64_t tseries_interval_ns = 0;
  uint32_t tseries_intervals = 0;
  TSeriesAgg tseries_agg = TSeriesAgg::Last;
  // A `// ubtrace:metric` annotation's label names (one per key part;
  // empty: key0..N) and help text, for the metric exporters.
  std::vector<std::string> labels;
  std::string help;

  template <class Archive> void serialize(Archive &ar) {
    ar(name, role, kind, agg, key, value, key_size, value_size, max_entries,
       hist_bits, lhist_min, lhist_max, lhist_step, tseries_interval_ns,
       tseries_intervals, tseries_agg, object_name, labels, help);
  }
};

// A place in the script, for messages at run time: "stdin:1:9-30", the
// file, line and column, and the source line with its underline as
// diagnostics show them.
struct SourceSite {
  std::string location;
  std::string filename;
  uint64_t line = 0;
  uint64_t column = 0;
  std::vector<std::string> context;
  template <class Archive> void serialize(Archive &ar) {
    ar(location, filename, line, column, context);
  }
};

// printf(), errorf(), system(), cat(): a format and the types of its arguments
// as the BPF program lays them out (packed at the given offsets).
struct FormatSpec {
  std::string format;
  std::vector<ValueType::Field> args;
  // For errorf()/warnf(): the call, then each macro call it was expanded
  // at, innermost first.
  std::vector<SourceSite> where;
  template <class Archive> void serialize(Archive &ar) {
    ar(format, args, where);
  }
};

enum class ProbeKind : uint8_t {
  Begin,
  End,
  Interval,
  Uprobe,
  Uretprobe,
  Usdt,
  GpuKernelEntry, // kernel:BIN:NAME
  GpuKernelExit,  // kernelret:BIN:NAME
  SelfSignal,     // self:signal:SIGUSR1, when ubtrace receives the signal
  Bench,          // bench:NAME, timed by --bench
  Profile,        // profile:UNIT:N, every thread sampled on its CPU time
  Test,           // test:NAME, run by --test
  Syscall,        // tracepoint:syscalls/raw_syscalls, the system calls of
                  // the traced process (ProbeSpec::syscalls)
  PerfEvent,      // software:/hardware: events other than CPU time, and
                  // watchpoints: a perf event of each traced thread
                  // (perf_type, perf_config...; interval_ns holds the
                  // count between samples)
};

// One system call event a Syscall probe runs at.
struct SyscallSite {
  int32_t nr = -1;   // -1: every system call (raw_syscalls)
  bool exit = false; // at its return (sys_exit*), else at its entry
  std::string name;  // as `probe` prints it there
  // Where each ctx argument slot (abi::kCtxUsdtArgs) is filled from:
  // 0..5 the argument in that position, 6 the number, 7 the result, else
  // nothing (ast/syscalls.h's SyscallSource).
  std::vector<int8_t> sources;
  template <class Archive> void serialize(Archive &ar) {
    ar(nr, exit, name, sources);
  }
};

struct ProbeSpec {
  ProbeKind kind = ProbeKind::Begin;
  std::string name;     // as printed by `probe`, e.g. "uprobe:/bin/ls:main"
  std::string section;  // ELF section of its program
  std::string target;   // binary or library (uprobe/usdt/kernel)
  std::string function; // function, kernel or USDT name (may hold wildcards)
  std::string provider; // USDT provider
  std::string lang;     // "cpp": match demangled C++ names
  uint64_t offset = 0;  // FUNC+OFFSET
  bool has_offset = false;
  uint64_t address = 0;     // BIN:ADDRESS (0: none)
  uint64_t interval_ns = 0; // interval and profile: the period
  SourceSite where;         // the attach point in the script
  // A uretprobe whose program reads `args`: its hook keeps the entry's
  // argument registers (abi::kCtxEntryArgs).
  bool entry_args = false;
  std::vector<SyscallSite> syscalls; // Syscall: the events it matched
  uint32_t perf_type = 0;            // PerfEvent: perf_event_attr's type...
  uint64_t perf_config = 0;          // ...config (a breakpoint's bp_type),
  uint64_t perf_config1 = 0;         // config1 (bp_addr)
  uint64_t perf_config2 = 0;         // and config2 (bp_len)
  bool perf_in_kernel = false;       // counts the kernel's part too
  template <class Archive> void serialize(Archive &ar) {
    ar(kind, name, section, target, function, provider, lang, offset,
       has_offset, address, interval_ns, where, entry_args, syscalls, perf_type,
       perf_config, perf_config1, perf_config2, perf_in_kernel);
  }
};

// A symbol uaddr() names: the backend writes its address in the traced
// process into the globals map after abi::Globals (8 bytes, in order).
struct UaddrSpec {
  std::string binary; // the probe's target as written (path or library
                      // name); "" for the traced program itself
  std::string symbol;
  template <class Archive> void serialize(Archive &ar) { ar(binary, symbol); }
};

// A helper call checked at run time (-k): which helper, and where.
struct HelperCheck {
  int32_t helper = 0; // BPF_FUNC_* id
  std::string name;   // "probe_read_user"
  std::vector<SourceSite> where;
  template <class Archive> void serialize(Archive &ar) {
    ar(helper, name, where);
  }
};

struct Bundle {
  std::vector<uint8_t> object; // the BPF ELF object
  // Every map of the object: the script's (role User, id = index, as
  // events name them) and the internal ones.
  std::vector<MapSpec> maps;
  std::vector<FormatSpec> printf_formats;
  std::vector<FormatSpec> system_formats;
  std::vector<FormatSpec> cat_formats;
  std::vector<std::string> time_formats;
  std::vector<ValueType> print_types;       // print(value)
  std::vector<std::string> join_separators; // join(ptr, sep)
  std::vector<ProbeSpec> probes;
  std::vector<std::string> positional_params;
  Config config; // every config variable, typed (runtime/config)
  std::vector<UaddrSpec> uaddrs;
  std::vector<HelperCheck> helper_checks; // EventType::HelperError's ids
  // --unsafe: also attach where the code's bounds cannot be checked (a
  // symbol of size 0, an address outside every symbol).
  bool unsafe = false;

  template <class Archive> void serialize(Archive &ar) {
    ar(object, maps, printf_formats, system_formats, cat_formats, time_formats,
       print_types, join_separators, probes, positional_params, config, uaddrs,
       helper_checks, unsafe);
  }
};

// Number of u64 buckets a hist(n, bits) slot holds: one for negative values,
// one for zero, then 2^bits buckets for each power of two up to 2^64.
inline uint32_t hist_buckets(uint32_t bits) {
  return 2 + (64u << bits);
}

// Number of u64 buckets an lhist(n, min, max, step) slot holds: below min,
// the steps, and at or above max.
inline uint32_t lhist_buckets(int64_t min, int64_t max, int64_t step) {
  return static_cast<uint32_t>((max - min) / step) + 2;
}

} // namespace ubtrace::runtime
