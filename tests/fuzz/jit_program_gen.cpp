#include "tests/fuzz/jit_program_gen.h"

#include "runtime/vm/asm.h"

#include <algorithm>
#include <functional>

namespace ubtrace::jit::fuzz {
namespace {

using vm::Insn;

// Main's stack: fp-8 key, fp-16 value, fp-32..fp-17 a callback's context
// (an accumulator at fp-32 and a counter at fp-24).
constexpr int16_t kKey = -8, kValue = -16, kCbCtx = -32;
constexpr uint32_t kHashMap = 0, kArrayMap = 1;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t record(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e) {
  std::vector<uint64_t> &log = record_log();
  uint64_t h = 0;
  for (uint64_t v : {a, b, c, d, e}) {
    log.push_back(v);
    h = mix(h, v);
  }
  return h;
}

enum class FnKind { CtxBody, IndexBody, LoopCallback, EachCallback };

struct Function {
  FnKind kind;
  std::vector<Insn> code;
};

class Composer {
public:
  Composer(std::span<const uint8_t> data, const JitGenOptions &options)
      : data_(data), opt_(options) {
    opt_.ctx_size &= ~7u;
  }

  std::vector<Insn> run() {
    emit(VM_MOV64_REG(6, 1));
    emit(VM_LD_IMM64(7, uint64_t(byte()) << 32 | byte()));
    for (int16_t off = -8; off >= kCbCtx; off -= 8)
      emit(VM_ST_MEM(BPF_DW, 10, off, 0));
    uint32_t segments = 1 + pick(opt_.max_segments);
    for (uint32_t i = 0; i < segments; ++i)
      segment();
    emit(VM_MOV64_REG(0, 7));
    emit(VM_EXIT());
    return link();
  }

private:
  uint8_t byte() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  uint32_t pick(uint32_t n) { return n <= 1 ? 0 : byte() % n; }
  int32_t imm() {
    static const int32_t edges[] = {0, 1, -1, 7, 0x7fffffff, INT32_MIN, 255};
    return pick(3) ? int32_t(byte()) - 64 : edges[pick(std::size(edges))];
  }
  std::span<const uint8_t> take(size_t n) {
    n = std::min(n, data_.size() - pos_);
    auto out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  std::vector<Insn> &code() { return current_ ? *current_ : main_code_; }
  void emit(Insn insn) { code().push_back(insn); }
  void emit(Insn lo, Insn hi) {
    code().push_back(lo);
    code().push_back(hi);
  }
  // A call or callback reference to function `fn`, patched by link().
  void call(size_t fn) {
    fixups_.push_back({current_fn_, code().size(), fn});
    emit(VM_CALL_REL(0));
  }
  void load_func(uint8_t dst, size_t fn) {
    fixups_.push_back({current_fn_, code().size(), fn});
    emit(VM_LD_FUNC(dst, 0));
  }

  // r1 = a key derived from r7; stored at fp-8 in the map's key size.
  void key_into_stack(uint32_t map) {
    emit(VM_MOV64_REG(1, 7));
    if (pick(4) == 0) // sometimes from the ctx
      emit(VM_LDX_MEM(BPF_DW, 1, 6, 8 * int(pick(opt_.ctx_size / 8))));
    // Arrays get an index past the end now and then.
    emit(VM_ALU64_IMM(BPF_AND, 1, map == kHashMap ? 15 : 7));
    emit(VM_STX_MEM(map == kHashMap ? BPF_DW : BPF_W, 10, 1, kKey));
  }
  void map_arg(uint32_t map) { emit(VM_LD_MAP(1, map)); }
  void fold_r0() {
    emit(VM_ALU64_IMM(BPF_MUL, 7, 31));
    emit(VM_ALU64_REG(BPF_ADD, 7, 0));
  }

  void segment() {
    switch (pick(8)) {
    case 0:
      return body_call();
    case 1:
      return map_update();
    case 2:
    case 3:
      return map_lookup_modify();
    case 4:
      return map_delete();
    case 5:
      return record_call();
    case 6:
      return bpf_loop();
    default:
      return for_each();
    }
  }

  void body_call() {
    emit(VM_MOV64_REG(1, 6));
    call(body(FnKind::CtxBody));
    fold_r0();
  }

  void map_update() {
    uint32_t map = pick(3) ? kHashMap : kArrayMap;
    key_into_stack(map);
    emit(VM_STX_MEM(BPF_DW, 10, 7, kValue));
    map_arg(map);
    emit(VM_MOV64_REG(2, 10));
    emit(VM_ALU64_IMM(BPF_ADD, 2, kKey));
    emit(VM_MOV64_REG(3, 10));
    emit(VM_ALU64_IMM(BPF_ADD, 3, kValue));
    emit(VM_MOV64_IMM(4, int32_t(pick(4) == 0 ? 1 + pick(2) : 0)));
    emit(VM_CALL_HELPER(BPF_FUNC_map_update_elem));
    fold_r0();
  }

  void map_lookup_modify() {
    uint32_t map = pick(2) ? kHashMap : kArrayMap;
    key_into_stack(map);
    map_arg(map);
    emit(VM_MOV64_REG(2, 10));
    emit(VM_ALU64_IMM(BPF_ADD, 2, kKey));
    emit(VM_CALL_HELPER(BPF_FUNC_map_lookup_elem));
    size_t branch = code().size();
    emit(VM_JMP_IMM(BPF_JEQ, 0, 0, 0));
    switch (pick(3)) {
    case 0:
      emit(VM_LDX_MEM(BPF_DW, 1, 0, 0));
      emit(VM_ALU64_REG(BPF_XOR, 7, 1));
      emit(VM_ALU64_REG(BPF_ADD, 1, 7));
      emit(VM_STX_MEM(BPF_DW, 0, 1, 0));
      break;
    case 1:
      emit(VM_MOV64_REG(1, 7));
      emit(VM_ATOMIC(BPF_DW, BPF_ADD, 0, 1, 0));
      break;
    default:
      emit(VM_MOV64_REG(1, 7));
      emit(VM_ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 0, 1, 0));
      emit(VM_ALU64_REG(BPF_XOR, 7, 1));
      break;
    }
    code()[branch].off = int16_t(code().size() - branch - 1);
    emit(VM_ALU64_IMM(BPF_ADD, 7, 1));
  }

  void map_delete() {
    key_into_stack(kHashMap);
    map_arg(kHashMap);
    emit(VM_MOV64_REG(2, 10));
    emit(VM_ALU64_IMM(BPF_ADD, 2, kKey));
    emit(VM_CALL_HELPER(BPF_FUNC_map_delete_elem));
    fold_r0();
  }

  void record_call() {
    emit(VM_MOV64_REG(1, 7));
    emit(VM_MOV64_IMM(2, imm()));
    if (opt_.ctx_size >= 8)
      emit(VM_LDX_MEM(BPF_DW, 3, 6, 8 * int(pick(opt_.ctx_size / 8))));
    else
      emit(VM_MOV64_IMM(3, imm()));
    emit(VM_MOV64_REG(4, 7));
    emit(VM_ALU64_IMM(BPF_RSH, 4, int32_t(pick(64))));
    emit(VM_LD_IMM64(5, uint64_t(imm()) << 32 | uint32_t(imm())));
    emit(VM_CALL_HELPER(kRecordHelper));
    fold_r0();
  }

  void callback_context() {
    emit(VM_STX_MEM(BPF_DW, 10, 7, kCbCtx));
    emit(VM_ST_MEM(BPF_DW, 10, kCbCtx + 8, 0));
    emit(VM_MOV64_REG(3, 10));
    emit(VM_ALU64_IMM(BPF_ADD, 3, kCbCtx));
    emit(VM_MOV64_IMM(4, pick(10) == 0 ? 1 : 0)); // flags: rarely invalid
  }
  void fold_callback_context() {
    fold_r0();
    emit(VM_LDX_MEM(BPF_DW, 1, 10, kCbCtx));
    emit(VM_ALU64_REG(BPF_XOR, 7, 1));
    emit(VM_LDX_MEM(BPF_DW, 1, 10, kCbCtx + 8));
    emit(VM_ALU64_REG(BPF_ADD, 7, 1));
  }

  void bpf_loop() {
    size_t cb = loop_callback();
    if (pick(2)) {
      emit(VM_MOV64_IMM(1, int32_t(pick(12))));
    } else {
      emit(VM_MOV64_REG(1, 7));
      emit(VM_ALU64_IMM(BPF_AND, 1, 7));
    }
    load_func(2, cb);
    callback_context();
    emit(VM_CALL_HELPER(BPF_FUNC_loop));
    fold_callback_context();
  }

  void for_each() {
    uint32_t map = pick(2) ? kHashMap : kArrayMap;
    size_t cb = each_callback(map);
    map_arg(map);
    load_func(2, cb);
    callback_context();
    emit(VM_CALL_HELPER(BPF_FUNC_for_each_map_elem));
    fold_callback_context();
  }

  // Functions, generated on first use and appended after main.
  size_t begin_function(FnKind kind) {
    functions_.push_back({kind, {}});
    return functions_.size() - 1;
  }
  template <class F> size_t with_function(FnKind kind, F body) {
    size_t fn = begin_function(kind);
    std::vector<Insn> code;
    std::vector<Insn> *saved = current_;
    size_t saved_fn = current_fn_;
    current_ = &code;
    current_fn_ = fn + 1;
    body();
    current_ = saved;
    current_fn_ = saved_fn;
    functions_[fn].code = std::move(code);
    return fn;
  }

  // A generated body; reused once there are enough of its kind.
  size_t body(FnKind kind) {
    std::vector<size_t> &made =
        kind == FnKind::CtxBody ? ctx_bodies_ : idx_bodies_;
    if (made.size() >= opt_.max_bodies || (!made.empty() && pick(2)))
      return made[pick(uint32_t(made.size()))];
    vm::fuzz::GenOptions g = opt_.body;
    g.ctx_size = kind == FnKind::CtxBody ? opt_.ctx_size : 0;
    size_t fn = begin_function(kind);
    functions_[fn].code = vm::fuzz::generate_program(take(16 + byte() * 2), g);
    made.push_back(fn);
    return fn;
  }

  // long cb(u32 index, u64 *acc_and_count): runs a body on the index,
  // folds its result into *acc, counts, and stops past a threshold.
  size_t loop_callback() {
    bool with_body = pick(2);
    size_t inner = with_body ? body(FnKind::IndexBody) : 0;
    int32_t stop_after = int32_t(1 + pick(16));
    return with_function(FnKind::LoopCallback, [&] {
      emit(VM_MOV64_REG(6, 2));
      emit(VM_MOV64_REG(8, 1));
      emit(VM_MOV64_REG(0, 1));
      if (with_body)
        call(inner); // r1 = index
      emit(VM_LDX_MEM(BPF_DW, 1, 6, 0));
      emit(VM_ALU64_IMM(BPF_MUL, 1, 31));
      emit(VM_ALU64_REG(BPF_XOR, 1, 0));
      emit(VM_ALU64_REG(BPF_ADD, 1, 8));
      emit(VM_STX_MEM(BPF_DW, 6, 1, 0));
      emit(VM_LDX_MEM(BPF_DW, 1, 6, 8));
      emit(VM_ALU64_IMM(BPF_ADD, 1, 1));
      emit(VM_STX_MEM(BPF_DW, 6, 1, 8));
      emit(VM_MOV64_IMM(0, 0));
      emit(VM_JMP_IMM(BPF_JLT, 1, stop_after, 1));
      emit(VM_MOV64_IMM(0, 1));
      emit(VM_EXIT());
    });
  }

  // long cb(map, key, value, u64 *acc_and_count): adds value and key into
  // *acc (commutative: hash order is the map's), may rewrite the value;
  // over the array it may stop early.
  size_t each_callback(uint32_t map) {
    bool rewrite = pick(2);
    int32_t stop_after = map == kArrayMap && pick(2) ? int32_t(1 + pick(4)) : 0;
    return with_function(FnKind::EachCallback, [&] {
      emit(VM_LDX_MEM(BPF_DW, 1, 3, 0));
      emit(VM_LDX_MEM(map == kHashMap ? BPF_DW : BPF_W, 2, 2, 0));
      emit(VM_LDX_MEM(BPF_DW, 5, 4, 0));
      emit(VM_ALU64_REG(BPF_ADD, 5, 1));
      emit(VM_ALU64_IMM(BPF_MUL, 2, 3));
      emit(VM_ALU64_REG(BPF_ADD, 5, 2));
      emit(VM_STX_MEM(BPF_DW, 4, 5, 0));
      if (rewrite) {
        emit(VM_ALU64_IMM(BPF_MUL, 1, 3));
        emit(VM_ALU64_IMM(BPF_ADD, 1, 1));
        emit(VM_STX_MEM(BPF_DW, 3, 1, 0));
      }
      emit(VM_LDX_MEM(BPF_DW, 1, 4, 8));
      emit(VM_ALU64_IMM(BPF_ADD, 1, 1));
      emit(VM_STX_MEM(BPF_DW, 4, 1, 8));
      emit(VM_MOV64_IMM(0, 0));
      if (stop_after) {
        emit(VM_JMP_IMM(BPF_JLT, 1, stop_after, 1));
        emit(VM_MOV64_IMM(0, 1));
      }
      emit(VM_EXIT());
    });
  }

  // Main, then every function; calls and callback references patched.
  std::vector<Insn> link() {
    std::vector<Insn> out = std::move(main_code_);
    std::vector<size_t> start(functions_.size() + 1, 0);
    for (size_t f = 0; f < functions_.size(); ++f) {
      start[f + 1] = out.size();
      out.insert(out.end(), functions_[f].code.begin(),
                 functions_[f].code.end());
    }
    for (const Fixup &fix : fixups_) {
      size_t pc = start[fix.in_fn] + fix.at;
      out[pc].imm = int32_t(int64_t(start[fix.target + 1]) - int64_t(pc + 1));
    }
    return out;
  }

  struct Fixup {
    size_t in_fn; // 0: main, else function index + 1
    size_t at;
    size_t target; // function index
  };

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  JitGenOptions opt_;
  std::vector<Insn> main_code_;
  std::vector<Insn> *current_ = nullptr;
  size_t current_fn_ = 0;
  std::vector<Function> functions_;
  std::vector<Fixup> fixups_;
  std::vector<size_t> ctx_bodies_, idx_bodies_;
};

} // namespace

std::vector<vm::MapDef> gen_maps() {
  vm::MapDef hash;
  hash.name = "gen_hash";
  hash.type = BPF_MAP_TYPE_HASH;
  hash.key_size = 8;
  hash.value_size = 8;
  hash.max_entries = 16;
  vm::MapDef array;
  array.name = "gen_array";
  array.type = BPF_MAP_TYPE_ARRAY;
  array.key_size = 4;
  array.value_size = 8;
  array.max_entries = 4;
  return {hash, array};
}

const vm::HelperTable &gen_helper_protos() {
  static const vm::HelperTable table = [] {
    vm::HelperTable t = vm::standard_helpers();
    vm::HelperProto p;
    p.id = kRecordHelper;
    p.name = "record";
    p.ret = vm::RetKind::Integer;
    p.args = {vm::ArgKind::Scalar, vm::ArgKind::Scalar, vm::ArgKind::Scalar,
              vm::ArgKind::Scalar, vm::ArgKind::Scalar};
    t.add(p);
    return t;
  }();
  return table;
}

vm::HelperImpls gen_helper_impls(const vm::HelperImpls &base) {
  vm::HelperImpls impls = base;
  impls.set(kRecordHelper, record);
  return impls;
}

std::vector<uint64_t> &record_log() {
  thread_local std::vector<uint64_t> log;
  return log;
}

std::vector<vm::Insn> generate_jit_program(std::span<const uint8_t> data,
                                           const JitGenOptions &options) {
  return Composer(data, options).run();
}

} // namespace ubtrace::jit::fuzz
