// Warp collectives. A lane that reaches one stops there (LaneState::
// Collective, pc at the instruction); once no lane of its warp can run, the
// scheduler asks this file to complete what it can:
//  - activemask: the lanes waiting at the same instruction form one group
//    and each gets the group's mask (a converged warp in uniform code, a
//    split one in divergent code: both are what hardware may do);
//  - *.sync with a member mask: complete when every existing member lane
//    waits at the same instruction; each gets the result over the members.
#include "tests/gpu/ptxsim/exec.h"

namespace ubtrace::ptxsim {
namespace {

bool same_place(const Lane &a, const Lane &b) {
  const Frame &fa = a.stack.back(), &fb = b.stack.back();
  return fa.fn == fb.fn && fa.pc == fb.pc;
}

void finish(Lane &lane) {
  lane.stack.back().pc++;
  lane.state = LaneState::Runnable;
}

// The operand holding the member mask of a .sync collective.
const Operand &member_mask(const Inst &in) {
  switch (in.op) {
  case Op::Shfl:
    return in.ops[4];
  case Op::BarWarpSync:
    return in.ops[1];
  default:
    return in.ops[2];
  }
}

void complete_group(Block &block, Lane *lanes, uint32_t count, uint32_t group,
                    const Inst &in) {
  uint64_t a[32] = {};
  for (uint32_t j = 0; j < count; ++j)
    if (group >> j & 1)
      a[j] = read_operand(block, lanes[j], in.ops[1]);
  switch (in.op) {
  case Op::MatchAny:
  case Op::MatchAll: {
    unsigned bits = type_bits(in.type);
    uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    bool all_equal = true;
    uint32_t first = static_cast<uint32_t>(__builtin_ctz(group));
    for (uint32_t j = 0; j < count; ++j)
      if ((group >> j & 1) && (a[j] & mask) != (a[first] & mask))
        all_equal = false;
    for (uint32_t j = 0; j < count; ++j) {
      if (!(group >> j & 1))
        continue;
      uint32_t result = 0;
      if (in.op == Op::MatchAny) {
        for (uint32_t k = 0; k < count; ++k)
          if ((group >> k & 1) && (a[k] & mask) == (a[j] & mask))
            result |= 1u << k;
      } else {
        result = all_equal ? group : 0;
        if (in.flags & kFlagDualDest)
          write_reg(lanes[j], in.ops[5], all_equal, Ty::Pred);
      }
      write_reg(lanes[j], in.ops[0], result, Ty::B32);
    }
    break;
  }
  case Op::Vote: {
    uint32_t ballot = 0;
    for (uint32_t j = 0; j < count; ++j)
      if ((group >> j & 1) && (a[j] & 1))
        ballot |= 1u << j;
    VoteMode mode = static_cast<VoteMode>(in.sub);
    for (uint32_t j = 0; j < count; ++j) {
      if (!(group >> j & 1))
        continue;
      switch (mode) {
      case VoteMode::All:
        write_reg(lanes[j], in.ops[0], ballot == group, Ty::Pred);
        break;
      case VoteMode::Any:
        write_reg(lanes[j], in.ops[0], ballot != 0, Ty::Pred);
        break;
      case VoteMode::Uni:
        write_reg(lanes[j], in.ops[0], ballot == 0 || ballot == group,
                  Ty::Pred);
        break;
      case VoteMode::Ballot:
        write_reg(lanes[j], in.ops[0], ballot, Ty::B32);
        break;
      }
    }
    break;
  }
  case Op::Redux: {
    AtomOp op = static_cast<AtomOp>(in.sub);
    bool sgn = type_signed(in.type);
    uint64_t acc = 0;
    bool first = true;
    for (uint32_t j = 0; j < count; ++j) {
      if (!(group >> j & 1))
        continue;
      uint64_t v = a[j] & 0xffffffffu;
      int64_t sv = static_cast<int32_t>(v), sacc = static_cast<int32_t>(acc);
      if (first) {
        acc = v;
        first = false;
        continue;
      }
      switch (op) {
      case AtomOp::Add:
        acc = (acc + v) & 0xffffffffu;
        break;
      case AtomOp::Min:
        acc = sgn ? (sv < sacc ? v : acc) : (v < acc ? v : acc);
        break;
      case AtomOp::Max:
        acc = sgn ? (sv > sacc ? v : acc) : (v > acc ? v : acc);
        break;
      case AtomOp::And:
        acc &= v;
        break;
      case AtomOp::Or:
        acc |= v;
        break;
      case AtomOp::Xor:
        acc ^= v;
        break;
      case AtomOp::Inc:
      case AtomOp::Dec:
      case AtomOp::Exch:
      case AtomOp::Cas:
        break;
      }
    }
    for (uint32_t j = 0; j < count; ++j)
      if (group >> j & 1)
        write_reg(lanes[j], in.ops[0], acc, in.type);
    break;
  }
  case Op::Shfl: {
    ShflMode mode = static_cast<ShflMode>(in.sub);
    uint64_t result[32] = {};
    bool valid[32] = {};
    for (uint32_t j = 0; j < count; ++j) {
      if (!(group >> j & 1))
        continue;
      uint32_t b =
          static_cast<uint32_t>(read_operand(block, lanes[j], in.ops[2])) & 31;
      uint32_t c =
          static_cast<uint32_t>(read_operand(block, lanes[j], in.ops[3]));
      int32_t lane = static_cast<int32_t>(j);
      int32_t seg = static_cast<int32_t>((c >> 8) & 31);
      int32_t cval = static_cast<int32_t>(c & 31);
      int32_t max_lane = (lane & seg) | (cval & ~seg);
      int32_t min_lane = lane & seg;
      int32_t src = lane;
      bool ok = false;
      switch (mode) {
      case ShflMode::Up:
        src = lane - static_cast<int32_t>(b);
        ok = src >= max_lane;
        break;
      case ShflMode::Down:
        src = lane + static_cast<int32_t>(b);
        ok = src <= max_lane;
        break;
      case ShflMode::Bfly:
        src = lane ^ static_cast<int32_t>(b);
        ok = src <= max_lane;
        break;
      case ShflMode::Idx:
        src = min_lane | (static_cast<int32_t>(b) & ~seg);
        ok = src <= max_lane;
        break;
      }
      if (!ok)
        src = lane;
      valid[j] = ok;
      bool src_member =
          src >= 0 && src < static_cast<int32_t>(count) && (group >> src & 1);
      result[j] = src_member ? a[src] : a[j];
    }
    for (uint32_t j = 0; j < count; ++j) {
      if (!(group >> j & 1))
        continue;
      write_reg(lanes[j], in.ops[0], result[j], in.type);
      if (in.flags & kFlagDualDest)
        write_reg(lanes[j], in.ops[5], valid[j], Ty::Pred);
    }
    break;
  }
  case Op::BarWarpSync:
    break;
  default:
    break;
  }
  for (uint32_t j = 0; j < count; ++j)
    if (group >> j & 1)
      finish(lanes[j]);
}

} // namespace

bool resolve_collectives(Block &block, Lane *lanes, uint32_t count) {
  bool progress = false;
  uint32_t done = 0; // lanes completed in this call
  for (uint32_t i = 0; i < count; ++i) {
    Lane &lane = lanes[i];
    if (lane.state != LaneState::Collective || (done >> i & 1))
      continue;
    const Inst &in = current_inst(lane);
    if (in.op == Op::Activemask) {
      uint32_t group = 0;
      for (uint32_t j = 0; j < count; ++j)
        if (lanes[j].state == LaneState::Collective && !(done >> j & 1) &&
            same_place(lanes[j], lane))
          group |= 1u << j;
      for (uint32_t j = 0; j < count; ++j)
        if (group >> j & 1) {
          write_reg(lanes[j], in.ops[0], group, Ty::B32);
          finish(lanes[j]);
        }
      done |= group;
      progress = true;
      continue;
    }
    uint32_t members =
        static_cast<uint32_t>(read_operand(block, lane, member_mask(in)));
    members |= 1u << i;
    if (count < 32)
      members &= (1u << count) - 1; // lanes past a partial warp do not exist
    bool ready = true;
    for (uint32_t j = 0; j < count && ready; ++j)
      if ((members >> j & 1) &&
          (lanes[j].state != LaneState::Collective || (done >> j & 1) ||
           !same_place(lanes[j], lane)))
        ready = false;
    if (!ready)
      continue;
    complete_group(block, lanes, count, members, in);
    done |= members;
    progress = true;
  }
  return progress;
}

} // namespace ubtrace::ptxsim
