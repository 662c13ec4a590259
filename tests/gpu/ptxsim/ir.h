// The decoded form of a PTX module: what the parser produces once at load and
// the interpreter runs. Instructions are compact records (an opcode enum, a
// few modifier bytes, operand slots resolved to register indexes, immediates
// or symbol offsets), so the run loop is a switch with no text in sight.
#pragma once

#include "tests/gpu/ptxsim/ptxsim.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::ptxsim {

enum class Op : uint8_t {
  Mov,
  Add,
  Sub,
  Mul,
  Mad,
  Fma,
  Div,
  Rem,
  Abs,
  Neg,
  Min,
  Max,
  And,
  Or,
  Xor,
  Not,
  Cnot,
  Shl,
  Shr,
  Popc,
  Clz,
  Brev,
  Bfind,
  Bfe,
  Bfi,
  Prmt,
  Shf,
  Copysign,
  Sqrt,
  Rsqrt,
  Rcp,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tanh,
  Testp,
  Setp,
  Selp,
  Slct,
  Cvt,
  Cvta,
  Ld,
  St,
  Atom,
  Red,
  Bra,
  Call,
  Ret,
  Exit,
  BarSync,
  Membar,
  Nanosleep,
  Nop,
  Trap,
  // Warp collectives: the lane stops there and the scheduler completes them.
  Activemask,
  MatchAny,
  MatchAll,
  Shfl,
  Vote,
  Redux,
  BarWarpSync,
};

// Scalar types; the width and kind are cached on the instruction.
enum class Ty : uint8_t {
  None,
  B8,
  B16,
  B32,
  B64,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F32,
  F64,
  Pred,
};

enum class Space : uint8_t { Generic, Global, Shared, Local, Const, Param };

// Where a symbol's storage is; its address is found at run time from the
// thread, frame or launch it belongs to, plus the operand's offset.
enum class SymBase : uint8_t {
  Absolute,      // module .global/.const: a fixed host address
  Local,         // the frame's .local area
  FrameParam,    // a .func's own parameters and return values
  CallParam,     // .param declared in a body (call arguments, return values)
  EntryParam,    // the launch's kernel parameter buffer
  Shared,        // the block's shared window (the value is a window offset)
  DynamicShared, // .extern .shared x[]: after the static shared variables
};

enum class OpndKind : uint8_t {
  None,
  Reg,    // regs[index] (+ value for an address)
  RegNot, // !%p
  Imm,    // value
  Sym,    // symbol address: base + value
  Special,
  Vec,   // value: first entry of Function::vec_regs | count << 32
  Label, // value: target pc
};

enum class Special : uint8_t {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpId,
  NWarpId,
  SmId,
  NSmId,
  GridId,
  GlobalTimer,
  GlobalTimerLo,
  GlobalTimerHi,
  Clock,
  Clock64,
  LanemaskEq,
  LanemaskLt,
  LanemaskLe,
  LanemaskGt,
  LanemaskGe,
  DynamicSmemSize,
  TotalSmemSize,
};

struct Operand {
  OpndKind kind = OpndKind::None;
  SymBase base = SymBase::Absolute; // for Sym
  uint32_t index = 0;
  uint64_t value = 0;
};

enum class Cmp : uint8_t {
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Lo,
  Ls,
  Hi,
  Hs,
  Equ,
  Neu,
  Ltu,
  Leu,
  Gtu,
  Geu,
  Num,
  Nan,
};
enum class BoolOp : uint8_t { None, And, Or, Xor };
enum class MulMode : uint8_t { Lo, Hi, Wide };
enum class AtomOp : uint8_t {
  Add,
  Min,
  Max,
  Inc,
  Dec,
  And,
  Or,
  Xor,
  Exch,
  Cas
};
enum class ShflMode : uint8_t { Up, Down, Bfly, Idx };
enum class VoteMode : uint8_t { All, Any, Uni, Ballot };
enum class Round : uint8_t { None, Rn, Rz, Rm, Rp, Rni, Rzi, Rmi, Rpi };
enum class MemSem : uint8_t { Plain, Volatile, Relaxed, Acquire, Release };
enum class TestpKind : uint8_t {
  Finite,
  Infinite,
  Number,
  NotANumber,
  Normal,
  Subnormal
};

// Modifier flags.
constexpr uint8_t kFlagSat = 1;       // .sat
constexpr uint8_t kFlagShiftAmt = 2;  // bfind.shiftamt
constexpr uint8_t kFlagWrap = 4;      // shf.wrap
constexpr uint8_t kFlagLeft = 8;      // shf.l
constexpr uint8_t kFlagDualDest = 16; // a second destination: d|p

struct Inst {
  Op op = Op::Nop;
  Ty type = Ty::None;  // the instruction type (cvt: destination)
  Ty type2 = Ty::None; // cvt: source type
  uint8_t sub = 0;     // Cmp / MulMode / AtomOp / ShflMode / VoteMode / Round
  uint8_t sub2 = 0;    // BoolOp (setp) / MemSem (ld, st)
  uint8_t flags = 0;
  Space space = Space::Generic;
  uint8_t vec = 1;    // ld/st vector width
  int32_t guard = -1; // predicate register slot, -1: unconditional
  bool guard_not = false;
  uint32_t line = 0;  // 1-based source line, for errors
  uint32_t extra = 0; // Call: index into Function::calls
  // ops[0] is the destination where there is one; ops[5] the second
  // destination of d|p forms (setp, match.all, shfl).
  Operand ops[6];
};

struct CallSite {
  int32_t callee = -1; // index into ModuleImpl::functions
  std::vector<Operand> rets;
  std::vector<Operand> args;
};

// A parameter of a function (entry or .func): where it lives in the
// frame's parameter area (entry: the launch's parameter buffer).
struct ParamSlot {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t align = 0;
};

struct Function {
  std::string name;
  bool is_entry = false;
  bool defined = false; // has a body (not only a prototype)
  std::vector<ParamSlot> params;
  std::vector<ParamSlot> rets;
  uint32_t param_bytes = 0; // params + rets area (entry: the launch buffer)
  uint32_t reg_count = 1;   // slot 0 is the `_` sink
  uint32_t local_bytes = 0; // .local declarations
  uint32_t local_align = 16;
  uint32_t callparam_bytes = 0; // .param declared in the body
  std::vector<Inst> code;
  std::vector<CallSite> calls;
  std::vector<uint32_t> vec_regs;
  std::vector<std::string> text; // each instruction's source text, for errors
  uint32_t line = 0;
  bool is_vprintf = false; // the CUDA runtime's vprintf (no body)
};

// A module-scope variable: host memory owned by the module.
struct GlobalVar {
  std::string name;
  Space space = Space::Global;
  std::unique_ptr<uint8_t[]> storage;
  uint8_t *address = nullptr;
  size_t size = 0;
};

struct ModuleImpl {
  std::vector<Function> functions;
  std::map<std::string, int32_t, std::less<>> function_index;
  std::vector<std::unique_ptr<GlobalVar>> globals;
  std::map<std::string, GlobalVar *, std::less<>> global_index;
  uint32_t shared_static_bytes = 0; // module and function .shared declarations
  uint32_t shared_align = 16;
};

// Parses PTX text into a module (parser.cpp).
Result<std::unique_ptr<ModuleImpl>> parse_module(std::string_view ptx);

// Runs a kernel (launch.cpp).
Result<LaunchStats> launch_kernel(const ModuleImpl &module,
                                  const Function &kernel, Dim3 grid, Dim3 block,
                                  uint32_t dynamic_shared_bytes,
                                  void *const *params,
                                  const LaunchOptions &options);

inline unsigned type_bits(Ty t) {
  switch (t) {
  case Ty::B8:
  case Ty::U8:
  case Ty::S8:
    return 8;
  case Ty::B16:
  case Ty::U16:
  case Ty::S16:
  case Ty::F16:
    return 16;
  case Ty::B32:
  case Ty::U32:
  case Ty::S32:
  case Ty::F32:
    return 32;
  case Ty::B64:
  case Ty::U64:
  case Ty::S64:
  case Ty::F64:
    return 64;
  case Ty::Pred:
    return 1;
  case Ty::None:
    return 64;
  }
  return 64;
}
inline bool type_signed(Ty t) {
  return t == Ty::S8 || t == Ty::S16 || t == Ty::S32 || t == Ty::S64;
}
inline bool type_float(Ty t) {
  return t == Ty::F16 || t == Ty::F32 || t == Ty::F64;
}

} // namespace ubtrace::ptxsim
