// The types of the language, as the type checker assigns them to nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ubtrace::ast {

enum class TypeKind : uint8_t {
  None,    // not (yet) known
  Void,    // no value (printf(), exit(), ...)
  Integer, // size 1/2/4/8, signed or not; enums too (enum_name set)
  Boolean,
  Pointer,   // elem = pointee
  CStruct,   // struct/union from C definitions: name, fields
  String,    // size = capacity including the NUL
  Buffer,    // buf(): a u32 length, then the data (size = 4 + capacity)
  Array,     // elem, count
  Tuple,     // fields (unnamed)
  Record,    // fields (named)
  UStack,    // ustack()
  KStack,    // kstack()
  USym,      // usym(), func in user probes
  KSym,      // ksym()
  Inet,      // ntop()
  MacAddr,   // macaddr()
  Timestamp, // strftime()
  CgroupPath,
  StrError,    // strerror()
  SignalName,  // signal_name()
  SyscallName, // syscall_name()
  Float,       // a C float or double member: bytes with no value (null)
  Username,
  ProbeName, // `probe`: an id of the probe that fired, printed as its name
  // Aggregations: the value types of maps assigned count(), sum(), ...
  Count,
  Sum,
  Min,
  Max,
  Avg,
  Stats,
  Hist,
  LHist,
  TSeries, // tseries(): the last num_intervals intervals of a value
  // Non-value kinds that only appear as function arguments.
  StackMode,     // bpftrace, perf, raw (ustack(perf, 5))
  TimestampMode, // nsecs(boot), ...
};

enum class AddrSpace : uint8_t { None, User, Kernel };

// How tseries() combines the values of one interval (runtime::TSeriesAgg
// has the same values).
enum class TSeriesAgg : uint8_t { Last, Avg, Max, Min, Sum };
inline constexpr int64_t kMaxTSeriesIntervals = 1000000;

struct Type;
using TypePtr = std::shared_ptr<const Type>;

struct Field {
  std::string name; // empty in tuples
  TypePtr type;
  uint32_t offset = 0;
  uint32_t bitfield_bits = 0; // C bitfields: width (0 = not a bitfield)
  uint32_t bitfield_shift = 0;
};

struct Type {
  TypeKind kind = TypeKind::None;
  uint32_t size = 0; // bytes as stored
  bool is_signed = false;
  // A non-negative integer literal (or a value made only of them): it takes
  // the sign of the integer it meets, as bpftrace's "sign-flexible" types.
  bool sign_flexible = false;
  AddrSpace as = AddrSpace::None;
  TypePtr elem;              // Pointer pointee, Array element
  uint32_t count = 0;        // Array length
  std::vector<Field> fields; // CStruct/Tuple/Record, laid out
  std::string name;          // CStruct "struct foo", enum name for Integer
  bool is_union = false;
  bool c_chars = false; // String: a C char[N], printed without the trailer
  uint32_t align = 0;   // CStruct: set by __attribute__((packed/aligned))
  // UStack/KStack
  uint32_t stack_limit = 0;
  uint8_t stack_mode = 0; // 0 bpftrace, 1 perf, 2 raw, 3 build_id
  // Hist/LHist parameters, fixed by the first use
  uint32_t hist_bits = 0;
  int64_t lhist_min = 0, lhist_max = 0, lhist_step = 0;
  // TSeries parameters: the interval, how many are kept, how the values of
  // one interval combine (runtime::TSeriesAgg)
  uint64_t ts_interval_ns = 0;
  uint32_t ts_intervals = 0;
  uint8_t ts_agg = 0;
  // Aggregations: the type they aggregate (sum of uint32 stays unsigned)
  bool agg_signed = true;

  bool is(TypeKind k) const { return kind == k; }
  bool is_int() const { return kind == TypeKind::Integer; }
  bool is_intlike() const {
    return kind == TypeKind::Integer || kind == TypeKind::Boolean;
  }
  bool is_none() const { return kind == TypeKind::None; }
  bool is_aggregation() const {
    return kind >= TypeKind::Count && kind <= TypeKind::TSeries;
  }
  // Aggregations that read as an integer (count, sum, min, max, avg).
  bool is_int_aggregation() const {
    return kind >= TypeKind::Count && kind <= TypeKind::Avg;
  }
  bool is_enum() const { return kind == TypeKind::Integer && !name.empty(); }
  const Field *field(const std::string &n) const;
};

// Constructors for the common shapes.
// The bytes of `probe` read as a string (runtime/abi.h's kProbeNameSize).
inline constexpr uint32_t kProbeTextSize = 256;

Type make_int(uint32_t bytes, bool is_signed);
// An integer as variables, maps and tuples store it: 8 bytes, the same
// signedness, an enum's name kept.
Type widen_int(const Type &t);
// An integer literal's type, as bpftrace gives it: the smallest signed
// integer that holds it (sign-flexible when it is not negative), uint64
// above INT64_MAX.
Type literal_type(uint64_t magnitude, bool negative);
Type make_bool();
Type make_void();
Type make_string(uint32_t size);
Type make_buffer(uint32_t capacity);
Type make_pointer(Type pointee, AddrSpace as = AddrSpace::None);
Type make_array(Type elem, uint32_t count);
Type make_simple(TypeKind k, uint32_t size = 0);
// Lays out fields in order with natural alignment (tuples, records).
Type make_tuple(std::vector<Type> elems);
Type make_record(std::vector<std::string> names, std::vector<Type> elems);

uint32_t type_alignment(const Type &t);

// Two types are the same for the purposes of map keys and values, variable
// reassignment and so on: exact, except that strings may differ in size.
bool same_type(const Type &a, const Type &b);

// The name bpftrace prints for a type: int64, uint8, string[16], int32 *,
// (int64,string[4]), record { .a = int64 }, struct foo, count_t, ...
std::string type_str(const Type &t);

// The type that holds both (integer promotion, longer strings, tuples
// elementwise). Returns None when there is none.
Type common_type(const Type &a, const Type &b);

} // namespace ubtrace::ast
