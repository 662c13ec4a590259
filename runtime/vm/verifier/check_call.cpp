// CALL and EXIT: helper calls checked against their prototypes, BPF-to-BPF
// calls and helper callbacks verified in frames of their own, and what each
// kind of function may return.
#include "runtime/vm/verifier/engine.h"

#include <algorithm>

namespace ubtrace::vm::verifier {
namespace {

constexpr uint64_t kMaxHelperSize = uint64_t(1) << 29;

const char *expectation(ArgKind kind) {
  switch (kind) {
  case ArgKind::None:
  case ArgKind::Anything:
  case ArgKind::CallbackCtx:
    return "a value";
  case ArgKind::Scalar:
    return "a number";
  case ArgKind::MapPtr:
    return "a map";
  case ArgKind::RingbufMapPtr:
    return "a ringbuf map";
  case ArgKind::PerfEventMapPtr:
    return "a perf event array map";
  case ArgKind::StackTraceMapPtr:
    return "a stack trace map";
  case ArgKind::MapKey:
    return "a pointer to a map key";
  case ArgKind::MapValue:
    return "a pointer to a map value";
  case ArgKind::ReadableMem:
  case ArgKind::ReadableMemOrNull:
  case ArgKind::WritableMem:
    return "a pointer to memory";
  case ArgKind::Size:
  case ArgKind::SizeOrZero:
    return "a size";
  case ArgKind::ConstAllocSize:
    return "a constant size";
  case ArgKind::ConstString:
    return "a pointer to a string";
  case ArgKind::Ctx:
    return "the unmodified ctx pointer";
  case ArgKind::Callback:
    return "a callback function";
  case ArgKind::RingbufMem:
    return "memory from ringbuf_reserve";
  }
  return "?";
}

bool map_type_fits(ArgKind kind, uint32_t type) {
  if (kind == ArgKind::RingbufMapPtr)
    return type == BPF_MAP_TYPE_RINGBUF;
  if (kind == ArgKind::PerfEventMapPtr)
    return type == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
  if (kind == ArgKind::StackTraceMapPtr)
    return type == BPF_MAP_TYPE_STACK_TRACE;
  // Key/value maps: not the streaming kinds.
  return type != BPF_MAP_TYPE_RINGBUF && type != BPF_MAP_TYPE_PERF_EVENT_ARRAY;
}

// Everything a helper call learns from its arguments.
struct CallFacts {
  int32_t map = -1;         // from the map argument
  int32_t callback = -1;    // callback entry pc
  Reg callback_ctx;         // handed to the callback
  Reg nr_loops;             // bpf_loop's count
  uint32_t release_ref = 0; // reference the call releases
  uint64_t alloc_size = 0;  // bytes the call allocates
  struct Written {
    Reg ptr;
    uint64_t size;
  };
  std::vector<Written> written; // stack the helper fills
};

class HelperCheck {
public:
  HelperCheck(Engine &engine, State &state, const HelperProto &proto)
      : engine_(engine), state_(state), proto_(proto) {}

  Result<CallFacts> run() {
    for (int a = 0; a < 5; ++a) {
      if (proto_.args[a] == ArgKind::None)
        continue;
      if (auto r = check_arg(a); !r)
        return std::move(r).take_error();
    }
    return facts_;
  }

private:
  Error bad(int a, const std::string &why) {
    return fail_at(state_.pc, "helper " + proto_.name + " arg" +
                                  std::to_string(a + 1) + " (r" +
                                  std::to_string(a + 1) + ") " + why);
  }
  Error mismatch(int a, const Reg &r) {
    return bad(a, std::string("expects ") + expectation(proto_.args[a]) +
                      ", got " + r.describe());
  }

  Result<void> check_arg(int a) {
    int regno = a + 1;
    if (auto r = engine_.check_readable(state_, regno); !r)
      return r;
    const Reg &reg = state_.reg(regno);
    if (reg.kind == RegKind::Ctx) // what the helper reads is not known here
      engine_.note_ctx_read(0, engine_.ctx().size);
    ArgKind kind = proto_.args[a];
    switch (kind) {
    case ArgKind::None:
    case ArgKind::Anything:
      return {};
    case ArgKind::CallbackCtx:
      facts_.callback_ctx = reg;
      return {};
    case ArgKind::Scalar:
      if (reg.kind != RegKind::Scalar)
        return mismatch(a, reg);
      if (a == 0)
        facts_.nr_loops = reg;
      return {};
    case ArgKind::MapPtr:
    case ArgKind::RingbufMapPtr:
    case ArgKind::PerfEventMapPtr:
    case ArgKind::StackTraceMapPtr:
      if (reg.kind != RegKind::MapPtr)
        return mismatch(a, reg);
      if (!map_type_fits(kind, engine_.map(reg.map).type))
        return bad(a, std::string("expects ") + expectation(kind) +
                          ", but map '" + engine_.map(reg.map).name +
                          "' has type " +
                          std::to_string(engine_.map(reg.map).type));
      facts_.map = int32_t(reg.map);
      return {};
    case ArgKind::MapKey:
    case ArgKind::MapValue: {
      if (facts_.map < 0)
        return bad(a, "has no map argument before it");
      const MapDef &map = engine_.map(uint32_t(facts_.map));
      uint32_t size = kind == ArgKind::MapKey ? map.key_size : map.value_size;
      if (!reg.is_pointer())
        return mismatch(a, reg);
      return check_region(engine_, state_, regno, reg, 0, size, Access::Read);
    }
    case ArgKind::ReadableMem:
    case ArgKind::ReadableMemOrNull:
    case ArgKind::WritableMem:
      if (!reg.is_pointer() &&
          !(kind == ArgKind::ReadableMemOrNull && reg.is_null_const()))
        return mismatch(a, reg);
      return {}; // checked with its size, the next argument
    case ArgKind::Size:
    case ArgKind::SizeOrZero:
      return check_size(a, reg);
    case ArgKind::ConstAllocSize:
      if (reg.kind != RegKind::Scalar || !reg.var.is_const())
        return mismatch(a, reg);
      if (reg.var.value() > kMaxHelperSize)
        return bad(a,
                   "size " + std::to_string(reg.var.value()) + " is too large");
      facts_.alloc_size = reg.var.value();
      return {};
    case ArgKind::ConstString:
      return check_string(a, reg);
    case ArgKind::Ctx:
      if (reg.kind != RegKind::Ctx || reg.off != 0 || !reg.var.is_const() ||
          reg.var.value() != 0)
        return mismatch(a, reg);
      return {};
    case ArgKind::Callback:
      if (reg.kind != RegKind::Func)
        return mismatch(a, reg);
      facts_.callback = int32_t(reg.map);
      return {};
    case ArgKind::RingbufMem:
      if (reg.kind == RegKind::MemOrNull)
        return bad(a, "is possibly NULL; compare it with 0 first");
      if (reg.kind != RegKind::Mem || reg.ref == 0 || reg.off != 0 ||
          !reg.var.is_const() || reg.var.value() != 0)
        return mismatch(a, reg);
      facts_.release_ref = reg.ref;
      return {};
    }
    return {};
  }

  Result<void> check_size(int a, const Reg &size) {
    if (a == 0)
      return bad(a, "is a size without a memory argument before it");
    ArgKind mem_kind = proto_.args[a - 1];
    if (size.kind != RegKind::Scalar)
      return mismatch(a, size);
    if (size.var.smin < 0)
      return bad(a, "may be negative (" + size.var.describe() + ")");
    if (size.var.umax > kMaxHelperSize)
      return bad(a, "is unbounded (" + size.var.describe() +
                        "); bound it with a comparison or a mask");
    if (proto_.args[a] == ArgKind::Size && size.var.umin == 0)
      return bad(a, "may be zero (" + size.var.describe() + ")");
    const Reg &mem = state_.reg(a);
    if (size.var.umax == 0)
      return {};
    if (mem.is_null_const())
      return bad(a - 1, "is NULL but its size r" + std::to_string(a + 1) +
                            " may be nonzero");
    bool writes = mem_kind == ArgKind::WritableMem;
    if (auto r = check_region(engine_, state_, a, mem, 0, size.var.umax,
                              writes ? Access::HelperWrite : Access::Read);
        !r)
      return r;
    if (writes)
      facts_.written.push_back({mem, size.var.umax});
    return {};
  }

  Result<void> check_string(int a, const Reg &reg) {
    if (!reg.is_pointer())
      return mismatch(a, reg);
    if (auto r = check_region(engine_, state_, a + 1, reg, 0, 1, Access::Read);
        !r)
      return r;
    if (reg.kind != RegKind::MapValue || !reg.var.is_const())
      return {};
    const MapDef &map = engine_.map(reg.map);
    if (!map.read_only || map.initial_value.size() != map.value_size)
      return {};
    int64_t start = reg.off + int64_t(reg.var.value());
    auto begin = map.initial_value.begin() + start;
    if (std::find(begin, map.initial_value.end(), 0) == map.initial_value.end())
      return bad(a, "points to a string that is not NUL-terminated");
    return {};
  }

  Engine &engine_;
  State &state_;
  const HelperProto &proto_;
  CallFacts facts_;
};

// A callee's stack dies with it: pointers to it must not survive.
void drop_frame_pointers(State &state, size_t first_dead_frame) {
  for_each_reg(state, [&](Reg &r) {
    if (r.kind == RegKind::Stack && r.frame >= first_dead_frame)
      r = Reg{};
  });
}

void clobber_args(Frame &frame) {
  for (int r = 1; r <= 5; ++r)
    frame.regs[r] = Reg{};
}

Frame new_frame(const State &state, uint32_t subprog, uint32_t callsite) {
  Frame frame;
  frame.subprog = subprog;
  frame.callsite = int32_t(callsite);
  frame.regs[kFramePointer] = Reg::pointer(RegKind::Stack);
  frame.regs[kFramePointer].frame = uint8_t(state.frames.size());
  return frame;
}

Result<void> check_depth(const State &state) {
  if (state.frames.size() >= size_t(kMaxCallFrames))
    return fail_at(state.pc, "call stack is too deep: more than " +
                                 std::to_string(kMaxCallFrames) + " frames");
  return {};
}

Frame callback_frame(const State &state, const HelperProto &proto,
                     const CallFacts &facts, uint32_t subprog) {
  Frame frame = new_frame(state, subprog, state.pc);
  frame.callback = proto.callback;
  std::array<Reg, 5> &args = frame.callback_args;
  switch (proto.callback) {
  case CallbackKind::Loop: {
    // The index runs below the count, itself capped by the helper.
    uint64_t count =
        std::min<uint64_t>(facts.nr_loops.var.umax, kMaxLoopIterations);
    args[0] = Reg::scalar(Scalar::unsigned_range(0, count ? count - 1 : 0));
    args[1] = facts.callback_ctx;
    break;
  }
  case CallbackKind::ForEachMapElem:
    args[0] = Reg::pointer(RegKind::MapPtr);
    args[1] = Reg::pointer(RegKind::MapKey);
    args[2] = Reg::pointer(RegKind::MapValue);
    for (int i = 0; i < 3; ++i)
      args[i].map = uint32_t(facts.map);
    args[3] = facts.callback_ctx;
    break;
  case CallbackKind::None:
    break;
  }
  for (int i = 0; i < 5; ++i)
    frame.regs[i + 1] = args[i];
  return frame;
}

Result<Step> check_helper_call(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  const HelperProto *proto = engine.helpers().find(in.imm);
  if (!proto)
    return fail_at(pc, "call to unknown helper " + std::to_string(in.imm));
  auto facts = HelperCheck(engine, state, *proto).run();
  if (!facts)
    return std::move(facts).take_error();
  bool has_callback = proto->callback != CallbackKind::None;
  if (auto r = engine.note_helper_call(
          pc, proto->id,
          proto->callback == CallbackKind::ForEachMapElem ? facts->map : -1,
          has_callback ? facts->callback : -1);
      !r)
    return std::move(r).take_error();

  if (facts->release_ref) {
    uint32_t ref = facts->release_ref;
    std::erase_if(state.refs, [&](const RefEntry &e) { return e.id == ref; });
    for_each_reg(state, [&](Reg &r) {
      if (r.ref == ref)
        r = Reg::unknown();
    });
  }
  for (const CallFacts::Written &w : facts->written)
    mark_helper_written(engine, state, w.ptr, w.size);

  Frame &caller = state.top();
  clobber_args(caller);
  Reg &r0 = caller.regs[0];
  switch (proto->ret) {
  case RetKind::Integer:
    r0 = Reg::unknown();
    break;
  case RetKind::MapValueOrNull:
    r0 = Reg::pointer(RegKind::MapValueOrNull);
    r0.map = uint32_t(facts->map);
    r0.id = engine.new_id();
    break;
  case RetKind::RingbufMemOrNull:
    r0 = Reg::pointer(RegKind::MemOrNull);
    r0.mem_size = uint32_t(facts->alloc_size);
    r0.id = engine.new_id();
    r0.ref = engine.new_id();
    state.refs.push_back({r0.ref, pc});
    break;
  }
  if (!has_callback) {
    ++state.pc;
    return Step::Continue;
  }

  // The helper may run the callback zero times...
  int sp = engine.cfg().subprog_at(uint32_t(facts->callback));
  if (sp < 0)
    return fail_at(pc, "callback at PC " + std::to_string(facts->callback) +
                           " is not a function");
  if (auto r = check_depth(state); !r)
    return std::move(r).take_error();
  engine.mark_callback(uint32_t(sp));
  State skip = state;
  ++skip.pc;
  engine.push_branch(std::move(skip), pc);
  // ...or once, and again from its exit (check_exit).
  state.frames.push_back(callback_frame(state, *proto, *facts, uint32_t(sp)));
  state.pc = uint32_t(facts->callback);
  return Step::Continue;
}

Result<Step> check_pseudo_call(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  uint32_t target = uint32_t(int64_t(pc) + 1 + in.imm);
  int sp = engine.cfg().subprog_at(target);
  if (sp < 0)
    return fail_at(pc, "call to PC " + std::to_string(target) +
                           ", which is not a function");
  if (auto r = check_depth(state); !r)
    return std::move(r).take_error();
  for (const Frame &f : state.frames)
    if (f.subprog == uint32_t(sp))
      return fail_at(pc, "recursive call to the function at PC " +
                             std::to_string(target));
  Frame callee = new_frame(state, uint32_t(sp), pc);
  for (int r = 1; r <= 5; ++r)
    callee.regs[r] = state.reg(r);
  state.frames.push_back(std::move(callee));
  state.pc = target;
  return Step::Continue;
}

} // namespace

Result<Step> check_call(Engine &engine, State &state, const Insn &in) {
  if (in.src == BPF_PSEUDO_CALL)
    return check_pseudo_call(engine, state, in);
  return check_helper_call(engine, state, in);
}

Result<Step> check_exit(Engine &engine, State &state, const Insn &in) {
  uint32_t pc = state.pc;
  if (auto r = engine.check_readable(state, 0); !r)
    return std::move(r).take_error();
  Reg r0 = state.reg(0);
  if (state.frames.size() == 1) {
    if (r0.kind != RegKind::Scalar)
      return fail_at(pc, "the program must return a number in r0, not a " +
                             std::string(reg_kind_name(r0.kind)));
    if (!state.refs.empty())
      return fail_at(pc, "unreleased reference: the ringbuf_reserve at PC " +
                             std::to_string(state.refs.front().pc) +
                             " is neither submitted nor discarded");
    return Step::Done;
  }
  Frame done = std::move(state.frames.back());
  state.frames.pop_back();
  size_t dead = state.frames.size();
  Frame &caller = state.top();
  if (done.callback != CallbackKind::None) {
    if (r0.kind != RegKind::Scalar || r0.var.smin < 0 || r0.var.umax > 1)
      return fail_at(pc, "a callback must return 0 or 1 in r0, not " +
                             r0.describe());
    // Another round of the callback, from what this one left behind.
    State again = state;
    Frame next = done;
    next.regs = {};
    next.stack.clear();
    for (int i = 0; i < 5; ++i)
      next.regs[i + 1] = next.callback_args[i];
    next.regs[kFramePointer] = done.regs[kFramePointer];
    ++next.callback_rounds;
    drop_frame_pointers(again, dead);
    again.frames.push_back(std::move(next));
    again.pc = engine.cfg().subprogs[done.subprog].start;
    again.callback_reentry = true;
    engine.push_branch(std::move(again), pc);
    // The helper returns.
    drop_frame_pointers(state, dead);
    caller.regs[0] = Reg::unknown();
    state.pc = uint32_t(done.callsite) + 1;
    return Step::Continue;
  }
  if (r0.kind == RegKind::Stack && r0.frame >= dead)
    return fail_at(pc, "a function must not return a pointer to its own "
                       "stack");
  caller.regs[0] = r0;
  clobber_args(caller);
  drop_frame_pointers(state, dead);
  state.pc = uint32_t(done.callsite) + 1;
  return Step::Continue;
}

} // namespace ubtrace::vm::verifier
