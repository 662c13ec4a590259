#include "tests/gpu/ptxsim/opcode.h"

#include <optional>
#include <vector>

namespace ubtrace::ptxsim {
namespace {

struct OpName {
  std::string_view name;
  Op op;
};

constexpr OpName kOps[] = {
    {"mov", Op::Mov},
    {"add", Op::Add},
    {"sub", Op::Sub},
    {"mul", Op::Mul},
    {"mad", Op::Mad},
    {"fma", Op::Fma},
    {"div", Op::Div},
    {"rem", Op::Rem},
    {"abs", Op::Abs},
    {"neg", Op::Neg},
    {"min", Op::Min},
    {"max", Op::Max},
    {"and", Op::And},
    {"or", Op::Or},
    {"xor", Op::Xor},
    {"not", Op::Not},
    {"cnot", Op::Cnot},
    {"shl", Op::Shl},
    {"shr", Op::Shr},
    {"popc", Op::Popc},
    {"clz", Op::Clz},
    {"brev", Op::Brev},
    {"bfind", Op::Bfind},
    {"bfe", Op::Bfe},
    {"bfi", Op::Bfi},
    {"prmt", Op::Prmt},
    {"shf", Op::Shf},
    {"copysign", Op::Copysign},
    {"sqrt", Op::Sqrt},
    {"rsqrt", Op::Rsqrt},
    {"rcp", Op::Rcp},
    {"ex2", Op::Ex2},
    {"lg2", Op::Lg2},
    {"sin", Op::Sin},
    {"cos", Op::Cos},
    {"tanh", Op::Tanh},
    {"testp", Op::Testp},
    {"setp", Op::Setp},
    {"selp", Op::Selp},
    {"slct", Op::Slct},
    {"cvt", Op::Cvt},
    {"cvta", Op::Cvta},
    {"ld", Op::Ld},
    {"st", Op::St},
    {"atom", Op::Atom},
    {"red", Op::Red},
    {"bra", Op::Bra},
    {"call", Op::Call},
    {"ret", Op::Ret},
    {"exit", Op::Exit},
    {"bar", Op::BarSync},
    {"barrier", Op::BarSync},
    {"membar", Op::Membar},
    {"fence", Op::Membar},
    {"nanosleep", Op::Nanosleep},
    {"prefetch", Op::Nop},
    {"prefetchu", Op::Nop},
    {"pmevent", Op::Nop},
    {"trap", Op::Trap},
    {"activemask", Op::Activemask},
    {"match", Op::MatchAny},
    {"shfl", Op::Shfl},
    {"vote", Op::Vote},
    {"redux", Op::Redux},
};

std::optional<Op> find_op(std::string_view name) {
  for (const OpName &o : kOps)
    if (o.name == name)
      return o.op;
  return std::nullopt;
}

std::optional<Space> parse_space(std::string_view c) {
  size_t colons = c.find("::");
  if (colons != std::string_view::npos)
    c = c.substr(0, colons);
  if (c == "global")
    return Space::Global;
  if (c == "shared")
    return Space::Shared;
  if (c == "local")
    return Space::Local;
  if (c == "const")
    return Space::Const;
  if (c == "param")
    return Space::Param;
  return std::nullopt;
}

std::optional<Cmp> parse_cmp(std::string_view c) {
  constexpr std::string_view names[] = {
      "eq", "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi",
      "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (size_t i = 0; i < std::size(names); ++i)
    if (names[i] == c)
      return static_cast<Cmp>(i);
  return std::nullopt;
}

std::optional<AtomOp> parse_atom_op(std::string_view c) {
  constexpr std::string_view names[] = {"add", "min", "max", "inc",  "dec",
                                        "and", "or",  "xor", "exch", "cas"};
  for (size_t i = 0; i < std::size(names); ++i)
    if (names[i] == c)
      return static_cast<AtomOp>(i);
  return std::nullopt;
}

std::optional<Round> parse_round(std::string_view c) {
  constexpr std::string_view names[] = {"",    "rn",  "rz",  "rm", "rp",
                                        "rni", "rzi", "rmi", "rpi"};
  for (size_t i = 1; i < std::size(names); ++i)
    if (names[i] == c)
      return static_cast<Round>(i);
  return std::nullopt;
}

// Modifiers with no effect on a host where every access is coherent:
// cache operators, scopes, approximation and flush-to-zero hints.
bool ignorable(std::string_view c) {
  constexpr std::string_view names[] = {
      "ftz", "approx",  "full", "uni",   "aligned", "nc",      "ca",     "cg",
      "cs",  "lu",      "cv",   "wb",    "wt",      "weak",    "cta",    "gpu",
      "sys", "cluster", "gl",   "noftz", "sc",      "acq_rel", "unified"};
  for (std::string_view n : names)
    if (n == c)
      return true;
  // ld.global.L1::evict_last & co.; L2::cache_hint takes an operand.
  return (c.starts_with("L1::") || c.starts_with("L2::")) &&
         c != "L2::cache_hint";
}

} // namespace

Ty parse_type(std::string_view c) {
  constexpr std::string_view names[] = {
      "",   "b8",  "b16", "b32", "b64", "u8",  "u16", "u32", "u64",
      "s8", "s16", "s32", "s64", "f16", "f32", "f64", "pred"};
  for (size_t i = 1; i < std::size(names); ++i)
    if (names[i] == c)
      return static_cast<Ty>(i);
  return Ty::None;
}

bool decode_opcode(std::string_view word, Inst &inst, bool &is_call,
                   std::string &why) {
  std::vector<std::string_view> comps;
  size_t start = 0;
  while (start <= word.size()) {
    size_t dot = word.find('.', start);
    if (dot == std::string_view::npos)
      dot = word.size();
    comps.push_back(word.substr(start, dot - start));
    start = dot + 1;
  }
  auto op = find_op(comps[0]);
  if (!op) {
    why = "unsupported opcode '" + std::string(word) + "'";
    return false;
  }
  inst.op = *op;
  is_call = inst.op == Op::Call;
  std::vector<Ty> types;
  std::vector<std::string_view> rest;
  Round round = Round::None;
  MemSem sem = MemSem::Plain;
  for (size_t i = 1; i < comps.size(); ++i) {
    std::string_view c = comps[i];
    if (Ty t = parse_type(c); t != Ty::None) {
      types.push_back(t);
    } else if (auto s = parse_space(c)) {
      inst.space = *s;
    } else if (c == "v2" || c == "v4") {
      inst.vec = c == "v2" ? 2 : 4;
    } else if (c == "volatile") {
      sem = MemSem::Volatile;
    } else if (c == "relaxed") {
      sem = MemSem::Relaxed;
    } else if (c == "acquire") {
      sem = MemSem::Acquire;
    } else if (c == "release") {
      sem = MemSem::Release;
    } else if (auto r = parse_round(c)) {
      round = *r;
    } else if (c == "sat") {
      inst.flags |= kFlagSat;
    } else if (ignorable(c)) {
    } else {
      rest.push_back(c);
    }
  }
  inst.type = types.empty() ? Ty::None : types[0];
  auto unsupported = [&] {
    why = "unsupported opcode '" + std::string(word) + "'";
    return false;
  };
  auto no_rest = [&] { return rest.empty() ? true : unsupported(); };
  switch (inst.op) {
  case Op::Mul:
  case Op::Mad:
    if (rest.size() > 1)
      return unsupported();
    if (rest.empty()) {
      if (!type_float(inst.type))
        return unsupported();
      if (inst.op == Op::Mad)
        inst.op = Op::Fma; // mad.rn.f32: a fused multiply-add
    } else if (rest[0] == "lo") {
      inst.sub = static_cast<uint8_t>(MulMode::Lo);
    } else if (rest[0] == "hi") {
      inst.sub = static_cast<uint8_t>(MulMode::Hi);
    } else if (rest[0] == "wide") {
      inst.sub = static_cast<uint8_t>(MulMode::Wide);
    } else {
      return unsupported();
    }
    return true;
  case Op::Setp: {
    if (rest.empty() || rest.size() > 2 || types.size() != 1)
      return unsupported();
    auto cmp = parse_cmp(rest[0]);
    if (!cmp)
      return unsupported();
    inst.sub = static_cast<uint8_t>(*cmp);
    if (rest.size() == 2) {
      if (rest[1] == "and")
        inst.sub2 = static_cast<uint8_t>(BoolOp::And);
      else if (rest[1] == "or")
        inst.sub2 = static_cast<uint8_t>(BoolOp::Or);
      else if (rest[1] == "xor")
        inst.sub2 = static_cast<uint8_t>(BoolOp::Xor);
      else
        return unsupported();
    }
    return true;
  }
  case Op::Cvt:
    if (types.size() != 2 || !rest.empty())
      return unsupported();
    inst.type2 = types[1];
    inst.sub = static_cast<uint8_t>(round);
    return true;
  case Op::Cvta:
    if (!rest.empty() && !(rest.size() == 1 && rest[0] == "to"))
      return unsupported();
    inst.sub = rest.empty() ? 0 : 1;
    return true;
  case Op::Ld:
  case Op::St:
    if (types.size() != 1)
      return unsupported();
    inst.sub2 = static_cast<uint8_t>(sem);
    return no_rest();
  case Op::Atom:
  case Op::Red: {
    if (rest.size() != 1 || types.size() != 1)
      return unsupported();
    auto aop = parse_atom_op(rest[0]);
    if (!aop)
      return unsupported();
    inst.sub = static_cast<uint8_t>(*aop);
    return true;
  }
  case Op::Shf:
    for (std::string_view c : rest) {
      if (c == "l")
        inst.flags |= kFlagLeft;
      else if (c == "wrap")
        inst.flags |= kFlagWrap;
      else if (c != "r" && c != "clamp")
        return unsupported();
    }
    return true;
  case Op::Bfind:
    if (rest.size() == 1 && rest[0] == "shiftamt")
      inst.flags |= kFlagShiftAmt;
    else if (!rest.empty())
      return unsupported();
    return true;
  case Op::Testp: {
    constexpr std::string_view kinds[] = {
        "finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    if (rest.size() != 1)
      return unsupported();
    for (size_t i = 0; i < std::size(kinds); ++i)
      if (kinds[i] == rest[0]) {
        inst.sub = static_cast<uint8_t>(i);
        return true;
      }
    return unsupported();
  }
  case Op::Slct:
    if (types.size() != 2)
      return unsupported();
    inst.type2 = types[1];
    return no_rest();
  case Op::BarSync:
    // bar.sync / barrier.sync / bar.warp.sync; not arrive or red.
    if (rest.size() == 1 && rest[0] == "sync")
      return true;
    if (rest.size() == 2 && rest[0] == "warp" && rest[1] == "sync") {
      inst.op = Op::BarWarpSync;
      return true;
    }
    return unsupported();
  case Op::Membar:
    for (std::string_view c : rest)
      if (c != "proxy" && c != "alias" && c != "async" && c != "generic")
        return unsupported();
    return true;
  case Op::MatchAny:
    if (rest.size() != 2 || rest[1] != "sync")
      return unsupported();
    if (rest[0] == "all")
      inst.op = Op::MatchAll;
    else if (rest[0] != "any")
      return unsupported();
    return true;
  case Op::Shfl: {
    if (rest.size() != 2 || rest[0] != "sync")
      return unsupported();
    constexpr std::string_view modes[] = {"up", "down", "bfly", "idx"};
    for (size_t i = 0; i < std::size(modes); ++i)
      if (modes[i] == rest[1]) {
        inst.sub = static_cast<uint8_t>(i);
        return true;
      }
    return unsupported();
  }
  case Op::Vote: {
    if (rest.size() != 2 || rest[0] != "sync")
      return unsupported();
    constexpr std::string_view modes[] = {"all", "any", "uni", "ballot"};
    for (size_t i = 0; i < std::size(modes); ++i)
      if (modes[i] == rest[1]) {
        inst.sub = static_cast<uint8_t>(i);
        return true;
      }
    return unsupported();
  }
  case Op::Redux: {
    if (rest.size() != 2 || rest[0] != "sync")
      return unsupported();
    auto aop = parse_atom_op(rest[1]);
    if (!aop || *aop == AtomOp::Inc || *aop == AtomOp::Dec ||
        *aop == AtomOp::Exch || *aop == AtomOp::Cas)
      return unsupported();
    inst.sub = static_cast<uint8_t>(*aop);
    return true;
  }
  case Op::Div:
  case Op::Rcp:
  case Op::Sqrt:
    // div.full.f32 / div.approx.f32 / div.rn.f64: all computed in IEEE.
    return no_rest();
  case Op::Nop:
    return true; // prefetch & co. take any modifiers
  case Op::Call:
  case Op::Mov:
  case Op::Add:
  case Op::Sub:
  case Op::Fma:
  case Op::Rem:
  case Op::Abs:
  case Op::Neg:
  case Op::Min:
  case Op::Max:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Not:
  case Op::Cnot:
  case Op::Shl:
  case Op::Shr:
  case Op::Popc:
  case Op::Clz:
  case Op::Brev:
  case Op::Bfe:
  case Op::Bfi:
  case Op::Prmt:
  case Op::Copysign:
  case Op::Rsqrt:
  case Op::Ex2:
  case Op::Lg2:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Selp:
  case Op::Bra:
  case Op::Ret:
  case Op::Exit:
  case Op::Nanosleep:
  case Op::Trap:
  case Op::Activemask:
  case Op::MatchAll:
  case Op::BarWarpSync:
    return no_rest();
  }
  return unsupported();
}

} // namespace ubtrace::ptxsim
