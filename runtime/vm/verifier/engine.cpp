#include "runtime/vm/verifier/engine.h"

#include <algorithm>

namespace ubtrace::vm::verifier {

Error fail_at(uint32_t pc, const std::string &what) {
  return make_error("PC " + std::to_string(pc) + ": " + what);
}

Engine::Engine(const Program &program, std::span<const MapDef> maps,
               const HelperTable &helpers, const ContextInfo &ctx,
               const VerifierOptions &options, const Cfg &cfg)
    : insns_(program.insns), program_(program), maps_(maps), helpers_(helpers),
      ctx_(ctx), options_(options), cfg_(cfg) {
  complete_.resize(insns_.size());
  ancestors_.resize(insns_.size());
  back_edges_.assign(insns_.size(), 0);
  stack_depth_.assign(cfg.subprogs.size(), 0);
  is_callback_.assign(cfg.subprogs.size(), false);
}

Result<void> Engine::check_readable(const State &state, int regno) const {
  if (state.reg(regno).kind == RegKind::NotInit)
    return fail_at(state.pc, "invalid read from uninitialized register r" +
                                 std::to_string(regno));
  return {};
}

void Engine::push_branch(State state, uint32_t from_pc) {
  if (!state.callback_reentry && state.pc <= from_pc) {
    count_back_edge(from_pc);
    state.last_back_edge = int32_t(from_pc);
  }
  if (state.parent)
    ++state.parent->branches;
  pending_.push_back(std::move(state));
}

void Engine::count_back_edge(uint32_t pc) {
  ++back_edges_[pc];
}

void Engine::note_stack_depth(const State &state, uint32_t frame,
                              int64_t bytes) {
  uint32_t sp = state.frames[frame].subprog;
  stack_depth_[sp] = std::max(stack_depth_[sp], uint32_t(bytes));
}

Result<void> Engine::note_helper_call(uint32_t pc, int32_t helper, int32_t map,
                                      int32_t callback) {
  for (HelperCallSite &site : helper_calls_) {
    if (site.pc != pc)
      continue;
    if (site.map != map)
      return fail_at(pc, "the helper iterates map '" + maps_[site.map].name +
                             "' on one path and '" + maps_[map].name +
                             "' on another");
    if (site.callback != callback)
      return fail_at(pc, "the helper gets the callback at PC " +
                             std::to_string(site.callback) +
                             " on one path and at PC " +
                             std::to_string(callback) + " on another");
    return {};
  }
  helper_calls_.push_back({pc, helper, map, callback});
  return {};
}

std::vector<FrameView> Engine::frame_views(const State &state) const {
  constexpr LiveRegs kCalleeSaved = 0x3c0; // r6..r9
  std::vector<FrameView> views(state.frames.size());
  auto view_at = [&](uint32_t pc, LiveRegs mask) {
    return FrameView{LiveRegs(cfg_.live_in[pc] & mask),
                     LiveRegs(cfg_.relevant_regs[pc] & mask),
                     cfg_.relevant_slots[pc]};
  };
  // A caller continues after its call, with r0..r5 rewritten by then.
  for (size_t f = 0; f + 1 < state.frames.size(); ++f)
    views[f] =
        view_at(uint32_t(state.frames[f + 1].callsite) + 1, kCalleeSaved);
  views.back() = view_at(state.pc, 0xffff);
  return views;
}

namespace {

uint64_t print_key(uint32_t pc, uint64_t fingerprint) {
  return fingerprint ^ (uint64_t(pc) * 0x9e3779b97f4a7c15u);
}

} // namespace

namespace {

// Slots wholly inside / touched by [lo, hi) (frame-pointer offsets).
uint64_t slots_touched(int64_t lo, int64_t hi) {
  uint64_t mask = 0;
  for (int64_t o = std::max<int64_t>(lo, -kStackSize);
       o < std::min<int64_t>(hi, 0); ++o)
    mask |= uint64_t(1) << ((-o - 1) / 8);
  return mask;
}

uint64_t slots_covered(int64_t lo, int64_t hi) {
  uint64_t mask = 0;
  for (int64_t slot_lo = -8; slot_lo >= -kStackSize; slot_lo -= 8)
    if (lo <= slot_lo && slot_lo + 8 <= hi)
      mask |= uint64_t(1) << ((-slot_lo - 1) / 8);
  return mask;
}

} // namespace

// A read of slots inherited from the last checkpoint: every checkpoint up
// the path, back to where they were written, must keep comparing them.
void Engine::mark_read(State &state, uint32_t frame, uint64_t slots) {
  if (frame < state.written.size())
    slots &= ~state.written[frame];
  for (Checkpoint *c = state.parent; c && slots; c = c->parent) {
    if (frame >= c->read.size())
      break;
    uint64_t fresh = slots & ~c->read[frame];
    if (!fresh)
      break; // marked before, and up the chain as far as it had to go
    c->read[frame] |= fresh;
    slots = fresh & ~c->segment_written[frame];
  }
}

void Engine::note_stack_read(State &state, uint32_t frame, int64_t lo,
                             int64_t hi) {
  mark_read(state, frame, slots_touched(lo, hi));
}

void Engine::note_stack_written(State &state, uint32_t frame, int64_t lo,
                                int64_t hi) {
  if (state.written.size() < state.frames.size())
    state.written.resize(state.frames.size(), 0);
  state.written[frame] |= slots_covered(lo, hi);
}

void Engine::evict(Checkpoint *c) {
  c->evicted = true;
  c->state = State{};
}

Result<Engine::Visit> Engine::visit_prune_point(State &cur) {
  uint32_t pc = cur.pc;
  std::vector<FrameView> views = frame_views(cur);
  uint64_t fingerprint = state_fingerprint(cur, views);
  bool reentry = cur.callback_reentry;
  cur.callback_reentry = false;

  // A verified state that covers this one: nothing new down this path.
  // Newest first: the sibling that covers a popped branch is usually recent.
  std::vector<Checkpoint *> &done = complete_[pc];
  bool stale = false;
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    Checkpoint *c = *it;
    if (may_cover(c->state, cur, views.back()) &&
        state_covers(c->state, cur, views, CompareMode::Subsume, &c->read)) {
      ++c->hits;
      // What the rest of the program reads from here on, it reads on this
      // path too.
      for (uint32_t f = 0; f < c->read.size(); ++f)
        mark_read(cur, f, c->read[f]);
      return Visit::Prune;
    }
    // Checkpoints that never help only cost comparisons.
    if (++c->misses > 32 + 8 * c->hits)
      stale = true;
  }
  if (stale)
    std::erase_if(done, [this](Checkpoint *c) {
      if (c->misses <= 32 + 8 * c->hits)
        return false;
      evict(c);
      return true;
    });

  // An ancestor at this pc: we went round a loop.
  if (reentry) {
    // A callback's next round: the helper bounds the rounds, so reaching a
    // state an earlier round covers is a fixed point, not a hang.
    Checkpoint *previous_round = nullptr;
    for (auto it = ancestors_[pc].rbegin(); it != ancestors_[pc].rend(); ++it) {
      Checkpoint *c = *it;
      if (state_covers(c->state, cur, views, CompareMode::Subsume)) {
        // c is still being explored: what it will read is unknown yet, so
        // every checkpoint in between keeps comparing every slot.
        for (uint32_t f = 0; f < cur.frames.size(); ++f)
          mark_read(cur, f, ~uint64_t(0));
        return Visit::Prune;
      }
      if (!previous_round && c->state.frames.size() == cur.frames.size())
        previous_round = c;
    }
    if (previous_round) {
      Frame &top = cur.top();
      if (top.callback_rounds > options_.max_callback_rounds)
        return fail_at(top.callsite,
                       "the callback at PC " +
                           std::to_string(cfg_.subprogs[top.subprog].start) +
                           " does not reach a fixed point in " +
                           std::to_string(options_.max_callback_rounds) +
                           " rounds");
      widen(previous_round->state, cur);
      fingerprint = state_fingerprint(cur, views);
    }
  } else {
    auto [first, last] =
        ancestors_by_print_.equal_range(print_key(pc, fingerprint));
    for (auto it = first; it != last; ++it) {
      Checkpoint *c = it->second;
      if (c->pc == pc && c->fingerprint == fingerprint &&
          state_covers(c->state, cur, views, CompareMode::Exact)) {
        // The same state in a later round of a helper's callback is the
        // rounds converging (the helper bounds them), not a hang.
        bool later_round = false;
        for (size_t f = 0; f < cur.frames.size() && f < c->state.frames.size();
             ++f)
          later_round |= cur.frames[f].callback != CallbackKind::None &&
                         cur.frames[f].callback_rounds !=
                             c->state.frames[f].callback_rounds;
        if (later_round) {
          for (uint32_t f = 0; f < cur.frames.size(); ++f)
            mark_read(cur, f, ~uint64_t(0));
          return Visit::Prune;
        }
        uint32_t edge =
            cur.last_back_edge >= 0 ? uint32_t(cur.last_back_edge) : pc;
        return fail_at(edge, "infinite loop: the back-edge to PC " +
                                 std::to_string(pc) +
                                 " comes back to a state already seen");
      }
    }
  }

  // Remember this state. The oldest ancestors give way first: they matter
  // only to loops longer than the cap, which the budget catches anyway.
  std::vector<Checkpoint *> &open = ancestors_[pc];
  if (open.size() >= options_.max_checkpoints_per_insn) {
    Checkpoint *oldest = open.front();
    open.erase(open.begin());
    auto [first, last] =
        ancestors_by_print_.equal_range(print_key(pc, oldest->fingerprint));
    for (auto it = first; it != last; ++it)
      if (it->second == oldest) {
        ancestors_by_print_.erase(it);
        break;
      }
    evict(oldest);
  }
  Checkpoint &c = checkpoint_pool_.emplace_back();
  c.pc = pc;
  c.fingerprint = fingerprint;
  c.state = cur;
  c.state.parent = nullptr;
  c.state.written.clear();
  c.read.assign(cur.frames.size(), 0);
  c.segment_written = cur.written;
  c.segment_written.resize(cur.frames.size(), 0);
  cur.written.assign(cur.frames.size(), 0);
  c.parent = cur.parent;
  c.branches = 1;
  cur.parent = &c;
  open.push_back(&c);
  ancestors_by_print_.emplace(print_key(pc, fingerprint), &c);
  ++stats_.checkpoints;
  return Visit::Continue;
}

// Every path below `c` finished: it may now prune.
void Engine::complete(Checkpoint *c) {
  if (c->evicted)
    return;
  std::vector<Checkpoint *> &open = ancestors_[c->pc];
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    if (*it == c) {
      open.erase(std::next(it).base());
      break;
    }
  auto [first, last] =
      ancestors_by_print_.equal_range(print_key(c->pc, c->fingerprint));
  for (auto it = first; it != last; ++it)
    if (it->second == c) {
      ancestors_by_print_.erase(it);
      break;
    }
  std::vector<Checkpoint *> &done = complete_[c->pc];
  if (done.size() >= options_.max_checkpoints_per_insn) {
    // Make room: drop the complete checkpoint that helped least.
    auto worst = done.begin();
    for (auto it = done.begin(); it != done.end(); ++it)
      if (int64_t((*it)->misses) - 8 * int64_t((*it)->hits) >
          int64_t((*worst)->misses) - 8 * int64_t((*worst)->hits))
        worst = it;
    evict(*worst);
    done.erase(worst);
  }
  done.push_back(c);
}

void Engine::finish_path(State &state) {
  for (Checkpoint *c = state.parent; c; c = c->parent) {
    if (--c->branches > 0)
      break;
    complete(c);
  }
}

Result<Step> Engine::step(State &state) {
  const Insn &in = insns_[state.pc];
  switch (insn_class(in.code)) {
  case BPF_ALU:
  case BPF_ALU64:
    return check_alu(*this, state, in);
  case BPF_JMP:
  case BPF_JMP32:
    if (insn_op(in.code) == BPF_CALL)
      return check_call(*this, state, in);
    if (insn_op(in.code) == BPF_EXIT)
      return check_exit(*this, state, in);
    return check_jmp(*this, state, in);
  case BPF_LDX:
    return check_ldx(*this, state, in);
  case BPF_ST:
    return check_st(*this, state, in);
  case BPF_STX:
    return check_stx(*this, state, in);
  case BPF_LD:
    return check_ld_imm64(*this, state, in);
  }
  return fail_at(state.pc, "unknown opcode"); // the structural pass forbids it
}

Error Engine::budget_error(uint32_t pc) const {
  auto busiest = std::max_element(back_edges_.begin(), back_edges_.end());
  std::string budget = std::to_string(options_.max_processed_insns);
  if (busiest != back_edges_.end() && *busiest > 0) {
    uint32_t edge = uint32_t(busiest - back_edges_.begin());
    return fail_at(edge, "loop is not provably bounded: the back-edge to PC " +
                             std::to_string(jump_target(insns_[edge], edge)) +
                             " was taken " + std::to_string(*busiest) +
                             " times when the budget of " + budget +
                             " instructions ran out");
  }
  return fail_at(pc, "program is too complex: the budget of " + budget +
                         " instructions ran out");
}

Result<VerifiedProgram> Engine::run() {
  State init;
  Frame &main = init.frames.emplace_back();
  main.regs[1] = Reg::pointer(RegKind::Ctx);
  main.regs[kFramePointer] = Reg::pointer(RegKind::Stack);
  pending_.push_back(std::move(init));
  while (!pending_.empty()) {
    State state = std::move(pending_.back());
    pending_.pop_back();
    for (;;) {
      if (++stats_.processed_insns > options_.max_processed_insns)
        return budget_error(state.pc);
      if (cfg_.prune_point[state.pc]) {
        auto visit = visit_prune_point(state);
        if (!visit)
          return std::move(visit).take_error();
        if (*visit == Visit::Prune) {
          ++stats_.pruned;
          if (options_.log)
            *options_.log += "PC " + std::to_string(state.pc) + ": pruned\n";
          break;
        }
      }
      if (options_.log)
        *options_.log += "PC " + std::to_string(state.pc) + ": " +
                         disassemble(insns_.data(), insns_.size(), state.pc) +
                         " |" + describe_regs(state) + "\n";
      auto next = step(state);
      if (!next)
        return std::move(next).take_error();
      if (*next == Step::Done)
        break;
    }
    finish_path(state);
  }

  VerifiedProgram out;
  out.name = program_.name;
  out.insns.assign(insns_.begin(), insns_.end());
  for (size_t i = 0; i < cfg_.subprogs.size(); ++i)
    out.subprogs.push_back({cfg_.subprogs[i].start, cfg_.subprogs[i].end,
                            stack_depth_[i], is_callback_[i]});
  out.helper_calls = helper_calls_;
  std::sort(out.helper_calls.begin(), out.helper_calls.end(),
            [](const auto &a, const auto &b) { return a.pc < b.pc; });
  for (uint32_t pc = 0; pc < insns_.size(); ++pc) {
    const Insn &in = insns_[pc];
    if (cfg_.second_half[pc] || !is_ld_imm64(in) ||
        (in.src != BPF_PSEUDO_MAP_FD && in.src != BPF_PSEUDO_MAP_VALUE))
      continue;
    if (std::find(out.maps_used.begin(), out.maps_used.end(),
                  uint32_t(in.imm)) == out.maps_used.end())
      out.maps_used.push_back(uint32_t(in.imm));
  }
  std::sort(out.maps_used.begin(), out.maps_used.end());
  out.ctx = ctx_;
  out.ctx_read_lo = ctx_read_lo_;
  out.ctx_read_hi = ctx_read_hi_;
  out.stats = stats_;
  return out;
}

void Engine::mark_callback(uint32_t subprog) {
  is_callback_[subprog] = true;
}

void Engine::note_ctx_read(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, ctx_.size);
  hi = std::clamp<int64_t>(hi, 0, ctx_.size);
  if (lo >= hi)
    return;
  ctx_read_lo_ = std::min(ctx_read_lo_, uint32_t(lo));
  ctx_read_hi_ = std::max(ctx_read_hi_, uint32_t(hi));
}

} // namespace ubtrace::vm::verifier

namespace ubtrace::vm {

Result<VerifiedProgram> verify(const Program &program,
                               std::span<const MapDef> maps,
                               const HelperTable &helpers,
                               const ContextInfo &ctx,
                               const VerifierOptions &options) {
  auto cfg = verifier::build_cfg(program.insns, maps, helpers);
  if (!cfg)
    return std::move(cfg).take_error();
  verifier::Engine engine(program, maps, helpers, ctx, options, *cfg);
  return engine.run();
}

} // namespace ubtrace::vm
