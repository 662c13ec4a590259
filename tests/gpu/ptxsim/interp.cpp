// The run loop: one lane at a time, a switch over decoded instructions.
// Registers are raw u64 bits; an instruction reads its sources at its type's
// width (sign- or zero-extended) and writes its result extended to 64 bits,
// so a register wider than the type (ld.param.u32 into a .b64) is right.
#include "tests/gpu/ptxsim/exec.h"

#include <bit>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace ubtrace::ptxsim {
namespace {

constexpr uint64_t kLowestValidAddress = 65536;

inline uint64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return v;
  unsigned s = 64 - bits;
  return static_cast<uint64_t>(static_cast<int64_t>(v << s) >> s);
}
inline uint64_t zext(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1);
}
// The value of `v` read (or written) at type t.
inline uint64_t ext(uint64_t v, Ty t) {
  unsigned bits = type_bits(t);
  if (t == Ty::Pred)
    return v & 1;
  return type_signed(t) ? sext(v, bits) : zext(v, bits);
}
// sqrt, rsqrt, rcp, ex2, lg2, sin, cos, tanh at float or double (the host's
// libm: not bit-exact with a GPU's approximations).
template <class F> F unary_math(Op op, F x) {
  switch (op) {
  case Op::Sqrt:
    return std::sqrt(x);
  case Op::Rsqrt:
    return F(1) / std::sqrt(x);
  case Op::Rcp:
    return F(1) / x;
  case Op::Ex2:
    return std::exp2(x);
  case Op::Lg2:
    return std::log2(x);
  case Op::Sin:
    return std::sin(x);
  case Op::Cos:
    return std::cos(x);
  default:
    return std::tanh(x);
  }
}

inline float as_f32(uint64_t v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v));
}
inline double as_f64(uint64_t v) {
  return std::bit_cast<double>(v);
}
inline uint64_t f32_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline uint64_t f64_bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

// A float operand at any float type, as double (exact for f16/f32).
inline double fget(uint64_t v, Ty t) {
  switch (t) {
  case Ty::F16:
    return static_cast<double>(
        std::bit_cast<_Float16>(static_cast<uint16_t>(v)));
  case Ty::F32:
    return as_f32(v);
  default:
    return as_f64(v);
  }
}
inline uint64_t fput(double d, Ty t) {
  switch (t) {
  case Ty::F16:
    return std::bit_cast<uint16_t>(static_cast<_Float16>(d));
  case Ty::F32:
    return f32_bits(static_cast<float>(d));
  default:
    return f64_bits(d);
  }
}

uint64_t globaltimer_ns() {
  // CLOCK_REALTIME, but never going backwards across threads.
  static std::atomic<uint64_t> last{0};
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t now = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
                 static_cast<uint64_t>(ts.tv_nsec);
  uint64_t prev = last.load(std::memory_order_relaxed);
  while (prev < now &&
         !last.compare_exchange_weak(prev, now, std::memory_order_relaxed)) {
  }
  return now > prev ? now : prev;
}

uint64_t clock_counter() {
  return static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
}

uint64_t special_value(const Block &b, const Lane &lane, Special s) {
  const LaunchState &l = *b.launch;
  uint32_t laneid = lane.lane;
  switch (s) {
  case Special::TidX:
  case Special::TidY:
  case Special::TidZ:
  case Special::NtidX:
  case Special::NtidY:
  case Special::NtidZ:
  case Special::CtaidX:
  case Special::CtaidY:
  case Special::CtaidZ:
  case Special::NctaidX:
  case Special::NctaidY:
  case Special::NctaidZ: {
    // Four x, y, z triples, in the enum's order.
    static_assert(unsigned(Special::NctaidZ) - unsigned(Special::TidX) == 11);
    unsigned i = unsigned(s) - unsigned(Special::TidX);
    const uint32_t block[3] = {l.block.x, l.block.y, l.block.z};
    const uint32_t grid[3] = {l.grid.x, l.grid.y, l.grid.z};
    const uint32_t *triple[4] = {lane.tid, block, b.ctaid, grid};
    return triple[i / 3][i % 3];
  }
  case Special::LaneId:
    return laneid;
  case Special::WarpId:
    return lane.linear / 32;
  case Special::NWarpId:
    return (l.block_threads + 31) / 32;
  case Special::SmId:
    return b.linear % l.options->sm_count;
  case Special::NSmId:
    return l.options->sm_count;
  case Special::GridId:
    return 1;
  case Special::GlobalTimer:
    return globaltimer_ns();
  case Special::GlobalTimerLo:
    return globaltimer_ns() & 0xffffffffu;
  case Special::GlobalTimerHi:
    return globaltimer_ns() >> 32;
  case Special::Clock:
    return clock_counter() & 0xffffffffu;
  case Special::Clock64:
    return clock_counter();
  case Special::LanemaskEq:
    return uint64_t(1) << laneid;
  case Special::LanemaskLt:
    return (uint64_t(1) << laneid) - 1;
  case Special::LanemaskLe:
    return (uint64_t(2) << laneid) - 1;
  case Special::LanemaskGt:
    return ~((uint64_t(2) << laneid) - 1) & 0xffffffffu;
  case Special::LanemaskGe:
    return ~((uint64_t(1) << laneid) - 1) & 0xffffffffu;
  case Special::DynamicSmemSize:
    return l.dynamic_shared;
  case Special::TotalSmemSize:
    return l.shared_bytes;
  }
  return 0;
}

uint64_t sym_address(const Block &b, const Frame &f, const Operand &o) {
  switch (o.base) {
  case SymBase::Absolute:
    return o.value;
  case SymBase::Local:
    return reinterpret_cast<uintptr_t>(f.local) + o.value;
  case SymBase::FrameParam:
    return reinterpret_cast<uintptr_t>(f.params) + o.value;
  case SymBase::CallParam:
    return reinterpret_cast<uintptr_t>(f.callparams) + o.value;
  case SymBase::EntryParam:
    return reinterpret_cast<uintptr_t>(b.launch->params) + o.value;
  case SymBase::Shared:
    return o.value;
  case SymBase::DynamicShared:
    return b.launch->dynamic_shared_offset + o.value;
  }
  return 0;
}

uint64_t slow_value(const Block &b, const Lane &lane, const Frame &f,
                    const Operand &o) {
  switch (o.kind) {
  case OpndKind::Reg:
    return f.regs[o.index] + o.value;
  case OpndKind::RegNot:
    return (f.regs[o.index] & 1) ^ 1;
  case OpndKind::Imm:
    return o.value;
  case OpndKind::Sym:
    return sym_address(b, f, o);
  case OpndKind::Special:
    return special_value(b, lane, static_cast<Special>(o.index));
  case OpndKind::None:
  case OpndKind::Vec:
  case OpndKind::Label:
    return 0;
  }
  return 0;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Frames: registers, then .local (aligned), the parameter area and the
// call-parameter area, in one zeroed allocation.
void push_frame(Lane &lane, const Function &fn, const CallSite *site) {
  Frame f;
  f.fn = &fn;
  f.site = site;
  size_t la = fn.local_align < 16 ? 16 : fn.local_align;
  size_t bytes = size_t(fn.reg_count) * 8 + la + fn.local_bytes + 16 +
                 fn.param_bytes + 16 + fn.callparam_bytes + 8;
  f.storage.reset(new uint64_t[(bytes + 7) / 8]());
  uint8_t *base = reinterpret_cast<uint8_t *>(f.storage.get());
  f.regs = f.storage.get();
  uintptr_t at = reinterpret_cast<uintptr_t>(base) + size_t(fn.reg_count) * 8;
  at = (at + la - 1) / la * la;
  f.local = reinterpret_cast<uint8_t *>(at);
  at += fn.local_bytes;
  at = (at + 15) / 16 * 16;
  f.params = reinterpret_cast<uint8_t *>(at);
  at += fn.param_bytes;
  at = (at + 15) / 16 * 16;
  f.callparams = reinterpret_cast<uint8_t *>(at);
  lane.stack.push_back(std::move(f));
}

template <class U> inline U load_as(const uint8_t *p, MemSem sem) {
  if (sem != MemSem::Plain && reinterpret_cast<uintptr_t>(p) % sizeof(U) == 0)
    return __atomic_load_n(reinterpret_cast<const U *>(p),
                           sem == MemSem::Acquire ? __ATOMIC_ACQUIRE
                                                  : __ATOMIC_RELAXED);
  U v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class U> inline void store_as(uint8_t *p, U v, MemSem sem) {
  if (sem != MemSem::Plain && reinterpret_cast<uintptr_t>(p) % sizeof(U) == 0) {
    __atomic_store_n(reinterpret_cast<U *>(p), v,
                     sem == MemSem::Release ? __ATOMIC_RELEASE
                                            : __ATOMIC_RELAXED);
    return;
  }
  std::memcpy(p, &v, sizeof v);
}

inline uint64_t load_bytes(const uint8_t *p, unsigned bytes, MemSem sem) {
  switch (bytes) {
  case 1:
    return load_as<uint8_t>(p, sem);
  case 2:
    return load_as<uint16_t>(p, sem);
  case 4:
    return load_as<uint32_t>(p, sem);
  default:
    return load_as<uint64_t>(p, sem);
  }
}
inline void store_bytes(uint8_t *p, uint64_t v, unsigned bytes, MemSem sem) {
  switch (bytes) {
  case 1:
    store_as<uint8_t>(p, static_cast<uint8_t>(v), sem);
    break;
  case 2:
    store_as<uint16_t>(p, static_cast<uint16_t>(v), sem);
    break;
  case 4:
    store_as<uint32_t>(p, static_cast<uint32_t>(v), sem);
    break;
  default:
    store_as<uint64_t>(p, v, sem);
    break;
  }
}

template <class U> U atomic_apply(U *p, AtomOp op, Ty t, U b, U c) {
  switch (op) {
  case AtomOp::Add:
    if (!type_float(t))
      return __atomic_fetch_add(p, b, __ATOMIC_SEQ_CST);
    break;
  case AtomOp::And:
    return __atomic_fetch_and(p, b, __ATOMIC_SEQ_CST);
  case AtomOp::Or:
    return __atomic_fetch_or(p, b, __ATOMIC_SEQ_CST);
  case AtomOp::Xor:
    return __atomic_fetch_xor(p, b, __ATOMIC_SEQ_CST);
  case AtomOp::Exch:
    return __atomic_exchange_n(p, b, __ATOMIC_SEQ_CST);
  case AtomOp::Cas: {
    U expected = b;
    __atomic_compare_exchange_n(p, &expected, c, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected;
  }
  case AtomOp::Min:
  case AtomOp::Max:
  case AtomOp::Inc:
  case AtomOp::Dec:
    break;
  }
  U old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    U next = old;
    bool is_signed = type_signed(t);
    unsigned bits = sizeof(U) * 8;
    int64_t so = static_cast<int64_t>(sext(old, bits));
    int64_t sb = static_cast<int64_t>(sext(b, bits));
    switch (op) {
    case AtomOp::Add:
      if (t == Ty::F32)
        next = static_cast<U>(f32_bits(as_f32(old) + as_f32(b)));
      else
        next = static_cast<U>(f64_bits(as_f64(old) + as_f64(b)));
      break;
    case AtomOp::Min:
      if (type_float(t))
        next = fget(old, t) <= fget(b, t) ? old : b;
      else
        next = is_signed ? (so < sb ? old : b) : (old < b ? old : b);
      break;
    case AtomOp::Max:
      if (type_float(t))
        next = fget(old, t) >= fget(b, t) ? old : b;
      else
        next = is_signed ? (so > sb ? old : b) : (old > b ? old : b);
      break;
    case AtomOp::Inc:
      next = old >= b ? 0 : old + 1;
      break;
    case AtomOp::Dec:
      next = (old == 0 || old > b) ? b : old - 1;
      break;
    case AtomOp::And:
    case AtomOp::Or:
    case AtomOp::Xor:
    case AtomOp::Exch:
    case AtomOp::Cas:
      break;
    }
    if (__atomic_compare_exchange_n(p, &old, next, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return old;
  }
}

bool compare_int(Cmp cmp, uint64_t a, uint64_t b, bool is_signed) {
  int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (cmp) {
  case Cmp::Eq:
  case Cmp::Equ:
    return a == b;
  case Cmp::Ne:
  case Cmp::Neu:
    return a != b;
  case Cmp::Lt:
  case Cmp::Ltu:
    return is_signed ? sa < sb : a < b;
  case Cmp::Le:
  case Cmp::Leu:
    return is_signed ? sa <= sb : a <= b;
  case Cmp::Gt:
  case Cmp::Gtu:
    return is_signed ? sa > sb : a > b;
  case Cmp::Ge:
  case Cmp::Geu:
    return is_signed ? sa >= sb : a >= b;
  case Cmp::Lo:
    return a < b;
  case Cmp::Ls:
    return a <= b;
  case Cmp::Hi:
    return a > b;
  case Cmp::Hs:
    return a >= b;
  case Cmp::Num:
  case Cmp::Nan:
    return false;
  }
  return false;
}

bool compare_float(Cmp cmp, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (cmp) {
  case Cmp::Eq:
    return !unordered && a == b;
  case Cmp::Ne:
    return !unordered && a != b;
  case Cmp::Lt:
    return !unordered && a < b;
  case Cmp::Le:
    return !unordered && a <= b;
  case Cmp::Gt:
    return !unordered && a > b;
  case Cmp::Ge:
    return !unordered && a >= b;
  case Cmp::Equ:
    return unordered || a == b;
  case Cmp::Neu:
    return unordered || a != b;
  case Cmp::Ltu:
    return unordered || a < b;
  case Cmp::Leu:
    return unordered || a <= b;
  case Cmp::Gtu:
    return unordered || a > b;
  case Cmp::Geu:
    return unordered || a >= b;
  case Cmp::Num:
    return !unordered;
  case Cmp::Nan:
    return unordered;
  case Cmp::Lo:
  case Cmp::Ls:
  case Cmp::Hi:
  case Cmp::Hs:
    return false;
  }
  return false;
}

double round_integral(double x, Round r) {
  switch (r) {
  case Round::Rni:
    return std::nearbyint(x);
  case Round::Rmi:
    return std::floor(x);
  case Round::Rpi:
    return std::ceil(x);
  case Round::Rzi:
    return std::trunc(x);
  case Round::None:
  case Round::Rn:
  case Round::Rz:
  case Round::Rm:
  case Round::Rp:
    return x;
  }
  return x;
}

uint64_t convert(const Inst &in, uint64_t a) {
  Ty dt = in.type, st = in.type2;
  Round r = static_cast<Round>(in.sub);
  bool sat = in.flags & kFlagSat;
  if (type_float(st)) {
    double x = fget(a, st);
    if (type_float(dt)) {
      x = round_integral(x, r);
      if (sat)
        x = std::isnan(x) ? 0.0 : x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
      return fput(x, dt);
    }
    // Float to integer: rounded, saturated, NaN -> 0.
    if (std::isnan(x))
      return 0;
    x = round_integral(x, r == Round::None ? Round::Rzi : r);
    unsigned bits = type_bits(dt);
    if (type_signed(dt)) {
      double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
      if (x <= lo)
        return sext(uint64_t(1) << (bits - 1), bits);
      if (x >= hi)
        return zext((uint64_t(1) << (bits - 1)) - 1, bits);
      return sext(static_cast<uint64_t>(static_cast<int64_t>(x)), bits);
    }
    if (x <= 0.0)
      return 0;
    if (x >= std::ldexp(1.0, bits))
      return zext(~uint64_t(0), bits);
    return static_cast<uint64_t>(x);
  }
  uint64_t v = ext(a, st);
  if (type_float(dt)) {
    switch (dt) {
    case Ty::F32:
      return type_signed(st)
                 ? f32_bits(static_cast<float>(static_cast<int64_t>(v)))
                 : f32_bits(static_cast<float>(v));
    case Ty::F16:
      return type_signed(st)
                 ? std::bit_cast<uint16_t>(
                       static_cast<_Float16>(static_cast<int64_t>(v)))
                 : std::bit_cast<uint16_t>(static_cast<_Float16>(v));
    default:
      return type_signed(st)
                 ? f64_bits(static_cast<double>(static_cast<int64_t>(v)))
                 : f64_bits(static_cast<double>(v));
    }
  }
  if (sat) {
    unsigned bits = type_bits(dt);
    if (type_signed(dt)) {
      int64_t lo = -(int64_t(1) << (bits - 1)),
              hi = (int64_t(1) << (bits - 1)) - 1;
      if (bits == 64) {
        lo = INT64_MIN;
        hi = INT64_MAX;
      }
      if (type_signed(st)) {
        int64_t s = static_cast<int64_t>(v);
        v = static_cast<uint64_t>(s < lo ? lo : s > hi ? hi : s);
      } else if (v > static_cast<uint64_t>(hi)) {
        v = static_cast<uint64_t>(hi);
      }
    } else {
      uint64_t hi = zext(~uint64_t(0), bits);
      if (type_signed(st) && static_cast<int64_t>(v) < 0)
        v = 0;
      else if (v > hi)
        v = hi;
    }
  }
  return ext(v, dt);
}

uint64_t bit_reverse(uint64_t v, unsigned bits) {
  uint64_t r = 0;
  for (unsigned i = 0; i < bits; ++i)
    if (v >> i & 1)
      r |= uint64_t(1) << (bits - 1 - i);
  return r;
}

uint64_t bfind(uint64_t a, Ty t, bool shiftamt) {
  unsigned bits = type_bits(t);
  uint64_t x = zext(a, bits);
  if (type_signed(t) && (x >> (bits - 1) & 1))
    x = zext(~x, bits);
  if (x == 0)
    return 0xffffffffu;
  unsigned pos = 63 - static_cast<unsigned>(__builtin_clzll(x));
  return shiftamt ? bits - 1 - pos : pos;
}

uint64_t bfe(uint64_t a, uint64_t b, uint64_t c, Ty t) {
  unsigned bits = type_bits(t);
  unsigned msb = bits - 1;
  unsigned pos = b & 0xff, len = c & 0xff;
  uint64_t x = zext(a, bits);
  unsigned n = pos > msb ? 0 : (len < bits - pos ? len : bits - pos);
  uint64_t field =
      n == 0 ? 0
             : (x >> pos) & (n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1);
  if (type_signed(t) && len != 0) {
    unsigned sb = pos + len - 1 < msb ? pos + len - 1 : msb;
    if (x >> sb & 1)
      field |= n >= 64 ? 0 : ~((uint64_t(1) << n) - 1);
  }
  return ext(field, t);
}

uint64_t bfi(uint64_t a, uint64_t b, uint64_t c, uint64_t d, Ty t) {
  unsigned bits = type_bits(t);
  unsigned pos = c & 0xff, len = d & 0xff;
  if (pos >= bits || len == 0)
    return zext(b, bits);
  unsigned n = len < bits - pos ? len : bits - pos;
  uint64_t mask = (n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1) << pos;
  return zext((b & ~mask) | ((a << pos) & mask), bits);
}

uint64_t prmt(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t bytes = (zext(b, 32) << 32) | zext(a, 32);
  uint64_t r = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned sel = (c >> (4 * i)) & 0xf;
    uint64_t byte = (bytes >> (8 * (sel & 7))) & 0xff;
    if (sel & 8)
      byte = (byte & 0x80) ? 0xff : 0;
    r |= byte << (8 * i);
  }
  return r;
}

bool testp(TestpKind k, double x) {
  switch (k) {
  case TestpKind::Finite:
    return std::isfinite(x);
  case TestpKind::Infinite:
    return std::isinf(x);
  case TestpKind::Number:
    return !std::isnan(x);
  case TestpKind::NotANumber:
    return std::isnan(x);
  case TestpKind::Normal:
    return std::isnormal(x);
  case TestpKind::Subnormal:
    return std::fpclassify(x) == FP_SUBNORMAL;
  }
  return false;
}

} // namespace

const Inst &current_inst(const Lane &lane) {
  const Frame &f = lane.stack.back();
  return f.fn->code[f.pc];
}

std::string describe(const Lane &lane) {
  const Frame &f = lane.stack.back();
  return "line " + std::to_string(f.fn->code[f.pc].line) + ": " +
         f.fn->text[f.pc];
}

uint64_t read_operand(Block &block, Lane &lane, const Operand &o) {
  const Frame &f = lane.stack.back();
  if (o.kind == OpndKind::Reg)
    return f.regs[o.index];
  return slow_value(block, lane, f, o);
}

void write_reg(Lane &lane, const Operand &o, uint64_t value, Ty type) {
  lane.stack.back().regs[o.index] = ext(value, type);
}

void start_lane(Block &block, Lane &lane) {
  lane.stack.clear();
  push_frame(lane, *block.launch->kernel, nullptr);
  lane.state = LaneState::Runnable;
}

LaneStop run_lane(Block &block, Lane &lane, uint64_t budget) {
  LaunchState &launch = *block.launch;
  Frame *f = &lane.stack.back();
  const Inst *code = f->fn->code.data();
  uint64_t *regs = f->regs;
  uint32_t pc = f->pc;
  uint64_t executed = 0;

  auto val = [&](const Operand &o) -> uint64_t {
    if (o.kind == OpndKind::Reg)
      return regs[o.index];
    if (o.kind == OpndKind::Imm)
      return o.value;
    return slow_value(block, lane, *f, o);
  };
  auto address = [&](const Operand &o) -> uint64_t {
    if (o.kind == OpndKind::Reg)
      return regs[o.index] + o.value;
    return val(o);
  };
  auto save = [&] {
    f->pc = pc;
    block.instructions += executed;
  };
  auto error = [&](const std::string &what) {
    save();
    launch.fail(what + " at line " + std::to_string(code[pc].line) + ": " +
                f->fn->text[pc]);
    return LaneStop::Error;
  };
  // The host address of a memory operand, or null (an error was raised).
  auto host = [&](const Inst &in, const Operand &o,
                  unsigned bytes) -> uint8_t * {
    uint64_t a = address(o);
    if (in.space == Space::Shared) {
      uint64_t off = a & 0xffffffffu;
      if (off + bytes > launch.shared_bytes) {
        error("shared memory access out of bounds (" + hex(off) + ")");
        return nullptr;
      }
      return block.shared + off;
    }
    if (a < kLowestValidAddress) {
      error("illegal address " + hex(a));
      return nullptr;
    }
    return reinterpret_cast<uint8_t *>(a);
  };

  for (;;) {
    if (executed >= budget) {
      save();
      return LaneStop::Preempted;
    }
    const Inst &in = code[pc];
    ++executed;
    if (in.guard >= 0 &&
        (regs[in.guard] & 1) == static_cast<uint64_t>(in.guard_not)) {
      ++pc;
      continue;
    }
    const Ty t = in.type;
    uint64_t &d = regs[in.ops[0].index];
    switch (in.op) {
    case Op::Mov:
      if (in.ops[0].kind == OpndKind::Vec || in.ops[1].kind == OpndKind::Vec) {
        // mov.b64 %rd, {%r1, %r2} packs (first element lowest);
        // mov.b64 {%r1, %r2}, %rd unpacks.
        bool pack = in.ops[1].kind == OpndKind::Vec;
        const Operand &v = pack ? in.ops[1] : in.ops[0];
        unsigned count = static_cast<unsigned>(v.value >> 32);
        unsigned width = type_bits(t) / count;
        const uint32_t *slots =
            f->fn->vec_regs.data() + static_cast<uint32_t>(v.value);
        if (pack) {
          uint64_t r = 0;
          for (unsigned i = 0; i < count; ++i)
            r |= zext(regs[slots[i]], width) << (i * width);
          d = r;
        } else {
          uint64_t a = val(in.ops[1]);
          for (unsigned i = 0; i < count; ++i)
            regs[slots[i]] = zext(a >> (i * width), width);
        }
        break;
      }
      d = ext(val(in.ops[1]), t);
      break;
    case Op::Add: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      if (t == Ty::F32) {
        float r = as_f32(a) + as_f32(b);
        if (in.flags & kFlagSat)
          r = std::isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
        d = f32_bits(r);
      } else if (t == Ty::F64) {
        d = f64_bits(as_f64(a) + as_f64(b));
      } else if ((in.flags & kFlagSat) && t == Ty::S32) {
        int64_t r = static_cast<int64_t>(sext(a, 32)) +
                    static_cast<int64_t>(sext(b, 32));
        r = r < INT32_MIN ? INT32_MIN : r > INT32_MAX ? INT32_MAX : r;
        d = static_cast<uint64_t>(r);
      } else {
        d = ext(a + b, t);
      }
      break;
    }
    case Op::Sub: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      if (t == Ty::F32)
        d = f32_bits(as_f32(a) - as_f32(b));
      else if (t == Ty::F64)
        d = f64_bits(as_f64(a) - as_f64(b));
      else
        d = ext(a - b, t);
      break;
    }
    case Op::Mul:
    case Op::Mad: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      if (t == Ty::F32) {
        d = f32_bits(as_f32(a) * as_f32(b));
        break;
      }
      if (t == Ty::F64) {
        d = f64_bits(as_f64(a) * as_f64(b));
        break;
      }
      unsigned bits = type_bits(t);
      bool sgn = type_signed(t);
      uint64_t r;
      switch (static_cast<MulMode>(in.sub)) {
      case MulMode::Lo:
        r = ext(a * b, t);
        if (in.op == Op::Mad)
          r = ext(r + val(in.ops[3]), t);
        break;
      case MulMode::Hi:
        if (bits == 64) {
          if (sgn)
            r = static_cast<uint64_t>(
                (static_cast<__int128>(static_cast<int64_t>(a)) *
                 static_cast<int64_t>(b)) >>
                64);
          else
            r = static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >>
                                      64);
        } else {
          r = (ext(a, t) * ext(b, t)) >> bits;
        }
        r = ext(r, t);
        if (in.op == Op::Mad)
          r = ext(r + val(in.ops[3]), t);
        break;
      case MulMode::Wide: {
        if (bits == 64)
          return error("64-bit .wide multiplication is not supported");
        r = ext(a, t) * ext(b, t);
        if (in.op == Op::Mad)
          r += val(in.ops[3]);
        r = sgn ? sext(r, bits * 2) : zext(r, bits * 2);
        break;
      }
      default:
        r = 0;
      }
      d = r;
      break;
    }
    case Op::Fma: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]), c = val(in.ops[3]);
      if (t == Ty::F32) {
        float r = std::fmaf(as_f32(a), as_f32(b), as_f32(c));
        if (in.flags & kFlagSat)
          r = std::isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
        d = f32_bits(r);
      } else {
        d = f64_bits(std::fma(as_f64(a), as_f64(b), as_f64(c)));
      }
      break;
    }
    case Op::Div: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      if (t == Ty::F32) {
        d = f32_bits(as_f32(a) / as_f32(b));
      } else if (t == Ty::F64) {
        d = f64_bits(as_f64(a) / as_f64(b));
      } else {
        uint64_t x = ext(a, t), y = ext(b, t);
        if (y == 0) {
          d = zext(~uint64_t(0), type_bits(t));
        } else if (type_signed(t)) {
          int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
          d = ext(sy == -1 ? static_cast<uint64_t>(0) - x
                           : static_cast<uint64_t>(sx / sy),
                  t);
        } else {
          d = x / y;
        }
      }
      break;
    }
    case Op::Rem: {
      uint64_t x = ext(val(in.ops[1]), t), y = ext(val(in.ops[2]), t);
      if (y == 0)
        d = x;
      else if (type_signed(t))
        d = static_cast<int64_t>(y) == -1
                ? 0
                : ext(static_cast<uint64_t>(static_cast<int64_t>(x) %
                                            static_cast<int64_t>(y)),
                      t);
      else
        d = x % y;
      break;
    }
    case Op::Abs: {
      uint64_t a = val(in.ops[1]);
      if (t == Ty::F32)
        d = f32_bits(std::fabs(as_f32(a)));
      else if (t == Ty::F64)
        d = f64_bits(std::fabs(as_f64(a)));
      else {
        int64_t s = static_cast<int64_t>(ext(a, t));
        d = ext(s < 0 ? static_cast<uint64_t>(0) - static_cast<uint64_t>(s)
                      : static_cast<uint64_t>(s),
                t);
      }
      break;
    }
    case Op::Neg: {
      uint64_t a = val(in.ops[1]);
      if (t == Ty::F32)
        d = f32_bits(-as_f32(a));
      else if (t == Ty::F64)
        d = f64_bits(-as_f64(a));
      else
        d = ext(static_cast<uint64_t>(0) - a, t);
      break;
    }
    case Op::Min:
    case Op::Max: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      bool is_min = in.op == Op::Min;
      if (t == Ty::F32) {
        d = f32_bits(is_min ? std::fmin(as_f32(a), as_f32(b))
                            : std::fmax(as_f32(a), as_f32(b)));
      } else if (t == Ty::F64) {
        d = f64_bits(is_min ? std::fmin(as_f64(a), as_f64(b))
                            : std::fmax(as_f64(a), as_f64(b)));
      } else {
        uint64_t x = ext(a, t), y = ext(b, t);
        bool less = type_signed(t)
                        ? static_cast<int64_t>(x) < static_cast<int64_t>(y)
                        : x < y;
        d = is_min ? (less ? x : y) : (less ? y : x);
      }
      break;
    }
    case Op::And:
      d = ext(val(in.ops[1]) & val(in.ops[2]), t);
      break;
    case Op::Or:
      d = ext(val(in.ops[1]) | val(in.ops[2]), t);
      break;
    case Op::Xor:
      d = ext(val(in.ops[1]) ^ val(in.ops[2]), t);
      break;
    case Op::Not:
      d = ext(~val(in.ops[1]), t);
      break;
    case Op::Cnot:
      d = ext(val(in.ops[1]), t) == 0 ? 1 : 0;
      break;
    case Op::Shl: {
      uint64_t n = zext(val(in.ops[2]), 32);
      d = n >= type_bits(t) ? 0 : ext(val(in.ops[1]) << n, t);
      break;
    }
    case Op::Shr: {
      uint64_t n = zext(val(in.ops[2]), 32);
      unsigned bits = type_bits(t);
      uint64_t a = ext(val(in.ops[1]), t);
      if (type_signed(t))
        d = ext(static_cast<uint64_t>(static_cast<int64_t>(a) >>
                                      (n >= bits ? 63 : n)),
                t);
      else
        d = n >= bits ? 0 : a >> n;
      break;
    }
    case Op::Popc:
      d = static_cast<uint64_t>(
          __builtin_popcountll(zext(val(in.ops[1]), type_bits(t))));
      break;
    case Op::Clz: {
      unsigned bits = type_bits(t);
      uint64_t a = zext(val(in.ops[1]), bits);
      d = a == 0 ? bits
                 : static_cast<uint64_t>(__builtin_clzll(a)) - (64 - bits);
      break;
    }
    case Op::Brev:
      d = bit_reverse(val(in.ops[1]), type_bits(t));
      break;
    case Op::Bfind:
      d = bfind(val(in.ops[1]), t, in.flags & kFlagShiftAmt);
      break;
    case Op::Bfe:
      d = bfe(val(in.ops[1]), val(in.ops[2]), val(in.ops[3]), t);
      break;
    case Op::Bfi:
      d = bfi(val(in.ops[1]), val(in.ops[2]), val(in.ops[3]), val(in.ops[4]),
              t);
      break;
    case Op::Prmt:
      d = prmt(val(in.ops[1]), val(in.ops[2]), val(in.ops[3]));
      break;
    case Op::Shf: {
      uint64_t a = zext(val(in.ops[1]), 32), b = zext(val(in.ops[2]), 32);
      uint64_t n = zext(val(in.ops[3]), 32);
      n = (in.flags & kFlagWrap) ? n & 31 : (n > 32 ? 32 : n);
      uint64_t both = (b << 32) | a;
      d = (in.flags & kFlagLeft) ? zext((both << n) >> 32, 32)
                                 : zext(both >> n, 32);
      break;
    }
    case Op::Copysign: {
      double a = fget(val(in.ops[1]), t), b = fget(val(in.ops[2]), t);
      d = fput(std::copysign(b, a), t);
      break;
    }
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Rcp:
    case Op::Ex2:
    case Op::Lg2:
    case Op::Sin:
    case Op::Cos:
    case Op::Tanh: {
      if (t == Ty::F32)
        d = f32_bits(unary_math(in.op, as_f32(val(in.ops[1]))));
      else
        d = f64_bits(unary_math(in.op, as_f64(val(in.ops[1]))));
      break;
    }
    case Op::Testp:
      d = testp(static_cast<TestpKind>(in.sub), fget(val(in.ops[1]), t)) ? 1
                                                                         : 0;
      break;
    case Op::Setp: {
      uint64_t a = val(in.ops[1]), b = val(in.ops[2]);
      Cmp cmp = static_cast<Cmp>(in.sub);
      bool r = type_float(t)
                   ? compare_float(cmp, fget(a, t), fget(b, t))
                   : compare_int(cmp, ext(a, t), ext(b, t), type_signed(t));
      bool q = !r;
      switch (static_cast<BoolOp>(in.sub2)) {
      case BoolOp::None:
        break;
      case BoolOp::And: {
        bool c = val(in.ops[3]) & 1;
        r = r && c;
        q = q && c;
        break;
      }
      case BoolOp::Or: {
        bool c = val(in.ops[3]) & 1;
        r = r || c;
        q = q || c;
        break;
      }
      case BoolOp::Xor: {
        bool c = val(in.ops[3]) & 1;
        r = r != c;
        q = q != c;
        break;
      }
      }
      d = r;
      if (in.flags & kFlagDualDest)
        regs[in.ops[5].index] = q;
      break;
    }
    case Op::Selp:
      d = ext((val(in.ops[3]) & 1) ? val(in.ops[1]) : val(in.ops[2]), t);
      break;
    case Op::Slct: {
      uint64_t c = val(in.ops[3]);
      bool pick_a = in.type2 == Ty::F32 ? !(as_f32(c) < 0.0f)
                                        : static_cast<int32_t>(c) >= 0;
      d = ext(pick_a ? val(in.ops[1]) : val(in.ops[2]), t);
      break;
    }
    case Op::Cvt:
      d = convert(in, val(in.ops[1]));
      break;
    case Op::Cvta: {
      uint64_t a = val(in.ops[1]);
      if (in.space == Space::Shared) {
        uint64_t base = reinterpret_cast<uintptr_t>(block.shared);
        a = in.sub ? a - base : base + zext(a, 32);
      }
      d = ext(a, t);
      break;
    }
    case Op::Ld:
    case Op::St: {
      const bool load = in.op == Op::Ld;
      unsigned bytes = std::max(type_bits(t) / 8, 1u);
      uint8_t *p = host(in, in.ops[1], bytes * in.vec);
      if (!p)
        return LaneStop::Error;
      MemSem sem = static_cast<MemSem>(in.sub2);
      const Operand &value = in.ops[load ? 0 : 2]; // a register or a vector
      if (in.vec == 1) {
        if (load)
          d = ext(load_bytes(p, bytes, sem), t);
        else
          store_bytes(p, val(value), bytes, sem);
        break;
      }
      const uint32_t *slots =
          f->fn->vec_regs.data() + static_cast<uint32_t>(value.value);
      for (unsigned i = 0; i < in.vec; ++i) {
        if (load)
          regs[slots[i]] = ext(load_bytes(p + i * bytes, bytes, sem), t);
        else
          store_bytes(p + i * bytes, regs[slots[i]], bytes, sem);
      }
      break;
    }
    case Op::Atom:
    case Op::Red: {
      unsigned bytes = type_bits(t) / 8;
      if (bytes != 4 && bytes != 8)
        return error("unsupported atomic width");
      uint8_t *p = host(in, in.ops[1], bytes);
      if (!p)
        return LaneStop::Error;
      if (reinterpret_cast<uintptr_t>(p) % bytes != 0)
        return error("misaligned atomic address " +
                     hex(reinterpret_cast<uintptr_t>(p)));
      AtomOp aop = static_cast<AtomOp>(in.sub);
      uint64_t b = val(in.ops[2]);
      uint64_t c = aop == AtomOp::Cas ? val(in.ops[3]) : 0;
      uint64_t old;
      if (bytes == 4)
        old = atomic_apply<uint32_t>(reinterpret_cast<uint32_t *>(p), aop, t,
                                     static_cast<uint32_t>(b),
                                     static_cast<uint32_t>(c));
      else
        old = atomic_apply<uint64_t>(reinterpret_cast<uint64_t *>(p), aop, t, b,
                                     c);
      if (in.op == Op::Atom)
        d = ext(old, t);
      break;
    }
    case Op::Bra:
      pc = static_cast<uint32_t>(in.ops[0].value);
      continue;
    case Op::Call: {
      const CallSite &site = f->fn->calls[in.extra];
      const Function &callee = launch.module->functions[site.callee];
      if (callee.is_vprintf) {
        if (site.args.size() != 2)
          return error("vprintf takes 2 arguments");
        auto arg = [&](const Operand &o) -> uint64_t {
          if (o.kind == OpndKind::Sym) {
            uint64_t v;
            std::memcpy(&v, reinterpret_cast<void *>(sym_address(block, *f, o)),
                        8);
            return v;
          }
          return val(o);
        };
        uint64_t fmt = arg(site.args[0]), args = arg(site.args[1]);
        if (fmt < kLowestValidAddress)
          return error("illegal address " + hex(fmt) + " (vprintf format)");
        int count = 0;
        std::string text =
            format_vprintf(reinterpret_cast<const char *>(fmt),
                           args < kLowestValidAddress
                               ? nullptr
                               : reinterpret_cast<const uint8_t *>(args),
                           &count);
        if (launch.options->printf_sink) {
          std::lock_guard<std::mutex> hold(launch.printf_lock);
          launch.options->printf_sink(text);
        } else {
          std::fwrite(text.data(), 1, text.size(), stdout);
          std::fflush(stdout);
        }
        if (!site.rets.empty()) {
          const Operand &r = site.rets[0];
          uint32_t v = static_cast<uint32_t>(count);
          if (r.kind == OpndKind::Sym)
            std::memcpy(reinterpret_cast<void *>(sym_address(block, *f, r)), &v,
                        4);
          else if (r.kind == OpndKind::Reg)
            regs[r.index] = v;
        }
        break;
      }
      if (!callee.defined)
        return error("call to undefined function '" + callee.name + "'");
      if (site.args.size() != callee.params.size() ||
          site.rets.size() > callee.rets.size())
        return error("call with the wrong number of arguments");
      if (lane.stack.size() >= 1024)
        return error("call stack overflow");
      f->pc = pc + 1;
      // Frames live in a vector: take what we need before it grows.
      Frame *caller = f;
      std::vector<uint64_t> values(site.args.size());
      std::vector<const uint8_t *> sources(site.args.size(), nullptr);
      for (size_t i = 0; i < site.args.size(); ++i) {
        const Operand &o = site.args[i];
        if (o.kind == OpndKind::Sym)
          sources[i] =
              reinterpret_cast<const uint8_t *>(sym_address(block, *caller, o));
        else
          values[i] = val(o);
      }
      push_frame(lane, callee, &site);
      f = &lane.stack.back();
      for (size_t i = 0; i < site.args.size(); ++i) {
        const ParamSlot &p = callee.params[i];
        if (sources[i])
          std::memcpy(f->params + p.offset, sources[i], p.size);
        else
          std::memcpy(f->params + p.offset, &values[i],
                      p.size < 8 ? p.size : 8);
      }
      code = f->fn->code.data();
      regs = f->regs;
      pc = 0;
      continue;
    }
    case Op::Ret: {
      if (lane.stack.size() == 1) {
        save();
        lane.state = LaneState::Exited;
        return LaneStop::Blocked;
      }
      const CallSite *site = f->site;
      const Function &callee = *f->fn;
      Frame &caller = lane.stack[lane.stack.size() - 2];
      for (size_t i = 0; i < site->rets.size(); ++i) {
        const Operand &o = site->rets[i];
        const ParamSlot &p = callee.rets[i];
        if (o.kind == OpndKind::Sym) {
          std::memcpy(reinterpret_cast<void *>(sym_address(block, caller, o)),
                      f->params + p.offset, p.size);
        } else if (o.kind == OpndKind::Reg) {
          uint64_t v = 0;
          std::memcpy(&v, f->params + p.offset, p.size < 8 ? p.size : 8);
          caller.regs[o.index] = v;
        }
      }
      lane.stack.pop_back();
      f = &lane.stack.back();
      code = f->fn->code.data();
      regs = f->regs;
      pc = f->pc;
      continue;
    }
    case Op::Exit:
      save();
      lane.state = LaneState::Exited;
      return LaneStop::Blocked;
    case Op::BarSync:
      save();
      lane.state = LaneState::Barrier;
      return LaneStop::Blocked;
    case Op::Membar:
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      break;
    case Op::Nanosleep:
      ++pc;
      save();
      lane.state = LaneState::Sleeping;
      return LaneStop::Blocked;
    case Op::Nop:
      break;
    case Op::Trap:
      return error("trap");
    case Op::Activemask:
    case Op::MatchAny:
    case Op::MatchAll:
    case Op::Shfl:
    case Op::Vote:
    case Op::Redux:
    case Op::BarWarpSync:
      save();
      lane.state = LaneState::Collective;
      return LaneStop::Blocked;
    }
    ++pc;
  }
}

} // namespace ubtrace::ptxsim
