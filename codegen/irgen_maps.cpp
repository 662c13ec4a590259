// Maps: their definitions, keys, reads, writes and aggregations.
#include "ast/passes/config.h"
#include "codegen/irgen.h"
#include "codegen/value_types.h"
#include "runtime/gpu/gpu_helper_ids.h"
#include "runtime/maps/layout.h"

#include <cstddef>
#include <cstdlib>
#include <linux/bpf.h>

namespace ubtrace::codegen {

static_assert(
    ast::kMaxMapEntries == runtime::maps::kMaxEntries,
    "max_map_keys and map declarations are bounded by the maps region");

using namespace ast;

namespace {

// The C-identifier name of a map in the object: "@x" -> "AT_x".
std::string object_name(const std::string &name) {
  std::string out = "AT_";
  for (char c : name.substr(1))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

runtime::AggKind agg_of(const Type &t) {
  switch (t.kind) {
  case TypeKind::Count:
    return runtime::AggKind::Count;
  case TypeKind::Sum:
    return runtime::AggKind::Sum;
  case TypeKind::Min:
    return runtime::AggKind::Min;
  case TypeKind::Max:
    return runtime::AggKind::Max;
  case TypeKind::Avg:
    return runtime::AggKind::Avg;
  case TypeKind::Stats:
    return runtime::AggKind::Stats;
  case TypeKind::Hist:
    return runtime::AggKind::Hist;
  case TypeKind::LHist:
    return runtime::AggKind::LHist;
  case TypeKind::TSeries:
    return runtime::AggKind::TSeries;
  default:
    return runtime::AggKind::None;
  }
}

uint32_t slot_size(const Type &t) {
  switch (t.kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
    return 8;
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
    return 16;
  case TypeKind::Hist:
    return 8 * runtime::hist_buckets(t.hist_bits);
  case TypeKind::LHist:
    return 8 * runtime::lhist_buckets(t.lhist_min, t.lhist_max, t.lhist_step);
  case TypeKind::TSeries:
    return static_cast<uint32_t>(std::min<uint64_t>(
        sizeof(runtime::TSeriesBucket) * t.ts_intervals, UINT32_MAX));
  default:
    return std::max<uint32_t>(IRGen::storage_type(t).size, 1);
  }
}

} // namespace

void IRGen::declare_maps() {
  auto *map_ty4 =
      llvm::StructType::get(*llctx_, {ptrt(), ptrt(), ptrt(), ptrt()});
  auto *map_ty2 = llvm::StructType::get(*llctx_, {ptrt(), ptrt()});
  auto make_global = [&](MapGen &mg) {
    auto *ty = mg.bpf_type == BPF_MAP_TYPE_RINGBUF ? map_ty2 : map_ty4;
    mg.gv = new llvm::GlobalVariable(
        *mod_, ty, false, llvm::GlobalValue::ExternalLinkage,
        llvm::Constant::getNullValue(ty), mg.spec.object_name);
    mg.gv->setSection(".maps");
    mg.gv->setDSOLocal(true);
    mg.gv->setAlignment(llvm::Align(8));
  };

  for (auto &[name, info] : ast_.maps) {
    if (info.value.is_none())
      continue; // reported by semantic analysis
    MapGen mg;
    mg.info = &info;
    mg.spec.name = name;
    mg.spec.object_name = object_name(name);
    mg.spec.role = runtime::MapRole::User;
    mg.spec.agg = agg_of(info.value);
    mg.spec.labels = info.metric_labels;
    mg.spec.help = info.metric_help;
    bool per_slot = mg.spec.agg != runtime::AggKind::None;
    bool lru = info.decl_kind == "lruhash" || info.decl_kind == "percpulruhash";
    mg.bpf_type = per_slot ? (lru ? BPF_MAP_TYPE_LRU_PERCPU_HASH
                                  : BPF_MAP_TYPE_PERCPU_HASH)
                           : (lru ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH);
    mg.spec.kind =
        per_slot ? (lru ? runtime::MapKind::PerCpuLruHash
                        : runtime::MapKind::PerCpuHash)
                 : (lru ? runtime::MapKind::LruHash : runtime::MapKind::Hash);
    mg.key = info.key.is_none() ? make_int(8, false) : info.key;
    // A scalar aggregation lives in a per-slot array: a lookup there is an
    // index, not a hash probe (count() about twice as fast). An entry reads
    // as unset when its value says so (count 0, no min/max/avg sample, an
    // empty histogram), so it prints only once updated, as bpftrace's does.
    // sum() keeps the hash: a sum of zeros is a value bpftrace prints.
    if (per_slot && info.key.is_none() && info.value.kind != TypeKind::Sum &&
        info.decl_kind.empty()) {
      mg.bpf_type = BPF_MAP_TYPE_PERCPU_ARRAY;
      mg.spec.kind = runtime::MapKind::PerCpuArray;
      mg.key = make_int(4, false);
    }
    mg.value = per_slot ? info.value : storage_type(info.value);
    mg.spec.key = info.key.is_none()
                      ? runtime::ValueType{}
                      : to_value_type(info.key, &ast_.c_types.enums);
    mg.spec.value = to_value_type(info.value, &ast_.c_types.enums);
    mg.spec.key_size = mg.key.size;
    mg.spec.value_size = slot_size(info.value);
    mg.spec.tseries_interval_ns = info.value.ts_interval_ns;
    mg.spec.tseries_intervals = info.value.ts_intervals;
    mg.spec.tseries_agg = static_cast<runtime::TSeriesAgg>(info.value.ts_agg);
    // Past the maps region's limits the trace would fail to start, naming
    // no place in the script: say where, and how large, here.
    if (mg.spec.key_size > runtime::maps::kMaxKeySize ||
        mg.spec.value_size > runtime::maps::kMaxValueSize) {
      bool key = mg.spec.key_size > runtime::maps::kMaxKeySize;
      fail(info.first_use,
           name + "'s " + (key ? "key" : "value") + " is " +
               std::to_string(key ? mg.spec.key_size : mg.spec.value_size) +
               " bytes, more than a map's " + (key ? "key" : "value") +
               " may have (" +
               std::to_string(key ? runtime::maps::kMaxKeySize
                                  : runtime::maps::kMaxValueSize) +
               "); strings in it take max_strlen bytes each");
    }
    mg.spec.max_entries = info.key.is_none() ? 1
                          : info.max_entries
                              ? static_cast<uint32_t>(info.max_entries)
                              : ast_.config.max_map_keys;
    mg.spec.hist_bits = info.value.hist_bits;
    mg.spec.lhist_min = info.value.lhist_min;
    mg.spec.lhist_max = info.value.lhist_max;
    mg.spec.lhist_step = info.value.lhist_step;
    mg.id = static_cast<int>(map_order_.size());
    map_order_.push_back(name);
    auto &slot = maps_[name] = std::move(mg);
    make_global(slot);
  }

  auto internal = [&](const char *name, runtime::MapRole role, uint32_t type,
                      runtime::MapKind kind, uint32_t key_size,
                      uint32_t value_size, uint32_t max_entries) {
    MapGen mg;
    mg.spec.name = name;
    mg.spec.object_name = name;
    mg.spec.role = role;
    mg.spec.kind = kind;
    mg.bpf_type = type;
    mg.spec.key_size = key_size;
    mg.spec.value_size = value_size;
    mg.spec.max_entries = max_entries;
    mg.key = make_int(key_size ? key_size : 4, false);
    mg.id = static_cast<int>(map_order_.size());
    map_order_.push_back(name);
    auto &slot = maps_[name] = std::move(mg);
    make_global(slot);
  };
  uint32_t rb_bytes = 4096;
  while (rb_bytes < ast_.config.perf_rb_pages * 4096u)
    rb_bytes *= 2;
  internal(abi::kEventsMap, runtime::MapRole::Events, BPF_MAP_TYPE_RINGBUF,
           runtime::MapKind::RingBuf, 0, 0, rb_bytes);
  internal(abi::kScratchMap, runtime::MapRole::Scratch,
           BPF_MAP_TYPE_PERCPU_ARRAY, runtime::MapKind::PerCpuArray, 4, 0, 2);
  internal(abi::kGlobalsMap, runtime::MapRole::Globals, BPF_MAP_TYPE_ARRAY,
           runtime::MapKind::Array, 4, sizeof(abi::Globals), 1);
  static_assert(abi::kProbeNameSize == ast::kProbeTextSize);
  if (ast_.probe_text)
    internal(abi::kProbeNamesMap, runtime::MapRole::ProbeNames,
             BPF_MAP_TYPE_ARRAY, runtime::MapKind::Array, 4,
             abi::kProbeNameSize, abi::kProbeNamesMax);
}

Val IRGen::probe_text(Expr *probe) {
  // The name the CLI wrote for this id; "" past the table or unwritten.
  auto *key = entry_alloca(4, "pkey");
  b_.CreateAlignedStore(b_.CreateTrunc(gen_scalar(probe), b_.getInt32Ty()), key,
                        llvm::Align(4));
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(),
                   {map_of(abi::kProbeNamesMap).gv, key});
  auto *out = entry_alloca(abi::kProbeNameSize, "probetext");
  zero(out, abi::kProbeNameSize);
  auto *has = block("probe.named");
  auto *done = block("probe.done");
  b_.CreateCondBr(b_.CreateIsNull(p), done, has);
  b_.SetInsertPoint(has);
  copy(out, p, abi::kProbeNameSize - 1);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return {out, true};
}

void IRGen::finish_module() {
  // Globals, then one u64 per uaddr() symbol.
  maps_.at(abi::kGlobalsMap).spec.value_size =
      static_cast<uint32_t>(sizeof(abi::Globals) + 8 * bundle_.uaddrs.size());
  // Entry 0 builds events, entry 1 holds large temporaries.
  maps_.at(abi::kScratchMap).spec.value_size =
      (std::max(scratch_size_, temps_size_) + 7) / 8 * 8;
  for (const auto &name : map_order_) {
    MapGen &mg = maps_.at(name);
    define_map_global(mg);
    bundle_.maps.push_back(mg.spec);
  }
  // The license: helpers like bpf_probe_read_user are GPL-only in kernels.
  auto *init = llvm::ConstantDataArray::getString(
      *llctx_, std::string(runtime::config_spelling(ast_.config.license)),
      true);
  auto *gv = new llvm::GlobalVariable(*mod_, init->getType(), true,
                                      llvm::GlobalValue::ExternalLinkage, init,
                                      "_license");
  gv->setSection("license");
}

MapGen &IRGen::map_of(const std::string &name) {
  return maps_.at(name);
}

llvm::Value *IRGen::gen_key_from(Expr *key, MapGen &mg, const Location &loc) {
  auto *slot = entry_alloca(mg.spec.key_size, "key");
  zero(slot, mg.spec.key_size);
  Val v = gen(key);
  store_value(slot, mg.key, v, key->type);
  (void)loc;
  return slot;
}

llvm::Value *IRGen::gen_key(Map &m, MapGen &mg) {
  if (!m.subscripted) {
    // Scalar maps: key 0, a u32 for arrays, a u64 for hashes.
    auto *slot = entry_alloca(8, "key");
    b_.CreateAlignedStore(i64(0), slot, llvm::Align(8));
    return slot;
  }
  std::vector<Expr *> keys = m.keys;
  if (keys.size() == 1)
    return gen_key_from(keys[0], mg, m.loc);
  auto *slot = entry_alloca(mg.spec.key_size, "key");
  zero(slot, mg.spec.key_size);
  for (size_t i = 0; i < keys.size() && i < mg.key.fields.size(); i++) {
    Val v = gen(keys[i]);
    const auto &f = mg.key.fields[i];
    store_value(byte_ptr(slot, f.offset), *f.type, v, keys[i]->type);
  }
  return slot;
}

static llvm::Value *map_ptr(MapGen &mg) {
  return mg.gv;
}

llvm::Value *IRGen::lookup_or_init(MapGen &mg, llvm::Value *key) {
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {map_ptr(mg), key});
  // Array entries always exist.
  if (mg.bpf_type == BPF_MAP_TYPE_PERCPU_ARRAY ||
      mg.bpf_type == BPF_MAP_TYPE_ARRAY)
    return p;
  auto *found = b_.GetInsertBlock();
  auto *missing = block("map.missing");
  auto *done = block("map.ready");
  b_.CreateCondBr(b_.CreateIsNull(p), missing, done);
  b_.SetInsertPoint(missing);
  // A zeroed value; large ones (histograms) are built in the scratch area.
  uint32_t size = mg.spec.value_size;
  llvm::Value *zero_val;
  if (size <= 64) {
    zero_val = entry_alloca(size, "zero");
  } else {
    zero_val = scratch(size);
  }
  auto *missing_now = b_.GetInsertBlock();
  (void)missing_now;
  if (zero_val) {
    zero(zero_val, size);
    helper(BPF_FUNC_map_update_elem, i64t(),
           {map_ptr(mg), key, zero_val, i64(BPF_NOEXIST)});
  }
  auto *p2 = helper(BPF_FUNC_map_lookup_elem, ptrt(), {map_ptr(mg), key});
  auto *from_missing = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(ptrt(), 2);
  phi->addIncoming(p, found);
  phi->addIncoming(p2, from_missing);
  return phi;
}

llvm::Value *IRGen::sum_slots(MapGen &mg, llvm::Value *key) {
  // Fold every slot of a per-slot entry with bpf_loop over the slot count
  // the runtime publishes in the globals (a plain loop would make the
  // verifier walk every iteration). The callback's data block is
  // { ptr key; i64 acc; i64 acc2 }.
  const Type &vt = mg.info->value;
  llvm::Function *cb = mod_->getFunction(mg.spec.object_name + "_fold");
  if (!cb) {
    auto *cb_ty = llvm::FunctionType::get(i64t(), {i64t(), ptrt()}, false);
    cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                mg.spec.object_name + "_fold", *mod_);
    cb->setSection(".text");
    cb->addFnAttr(llvm::Attribute::NoUnwind);
    auto *di_ptr = di_->createPointerType(nullptr, 64);
    auto *di_u64 =
        di_->createBasicType("unsigned long", 64, llvm::dwarf::DW_ATE_unsigned);
    auto *sp =
        di_->createFunction(cu_, cb->getName(), cb->getName(), difile_, 0,
                            di_->createSubroutineType(di_->getOrCreateTypeArray(
                                {di_int(), di_u64, di_ptr})),
                            0, llvm::DINode::FlagPrototyped,
                            llvm::DISubprogram::SPFlagDefinition |
                                llvm::DISubprogram::SPFlagLocalToUnit);
    di_->createParameterVariable(sp, "index", 1, difile_, 0, di_u64, true);
    di_->createParameterVariable(sp, "data", 2, difile_, 0, di_ptr, true);
    cb->setSubprogram(sp);
    llvm::IRBuilder<> cbb(llvm::BasicBlock::Create(*llctx_, "entry", cb));
    cbb.SetCurrentDebugLocation(llvm::DILocation::get(*llctx_, 0, 0, sp));
    auto *data = cb->getArg(1);
    auto *k = cbb.CreateAlignedLoad(ptrt(), data, llvm::Align(8));
    auto *fty = llvm::FunctionType::get(
        ptrt(), {ptrt(), ptrt(), b_.getInt32Ty()}, false);
    auto *callee =
        cbb.CreateIntToPtr(i64(BPF_FUNC_map_lookup_percpu_elem), ptrt());
    auto *p = cbb.CreateCall(
        fty, callee,
        {mg.gv, k, cbb.CreateTrunc(cb->getArg(0), b_.getInt32Ty())});
    auto *has = llvm::BasicBlock::Create(*llctx_, "has", cb);
    auto *out = llvm::BasicBlock::Create(*llctx_, "out", cb);
    // No value at this slot: none at any later one either (slots are taken
    // lowest first, and an absent key is absent from all of them), so the
    // loop stops instead of visiting every slot the region reserves.
    auto *none = llvm::BasicBlock::Create(*llctx_, "none", cb);
    cbb.CreateCondBr(cbb.CreateIsNull(p), none, has);
    cbb.SetInsertPoint(has);
    auto *acc = cbb.CreateInBoundsGEP(b_.getInt8Ty(), data, i64(8));
    auto *acc2 = cbb.CreateInBoundsGEP(b_.getInt8Ty(), data, i64(16));
    auto *v0 = cbb.CreateAlignedLoad(i64t(), p, llvm::Align(8));
    auto *a0 = cbb.CreateAlignedLoad(i64t(), acc, llvm::Align(8));
    switch (vt.kind) {
    case TypeKind::Avg:
    case TypeKind::Stats: {
      auto *c0 = cbb.CreateAlignedLoad(
          i64t(), cbb.CreateInBoundsGEP(b_.getInt8Ty(), p, i64(8)),
          llvm::Align(8));
      auto *ac = cbb.CreateAlignedLoad(i64t(), acc2, llvm::Align(8));
      cbb.CreateAlignedStore(cbb.CreateAdd(a0, v0), acc, llvm::Align(8));
      cbb.CreateAlignedStore(cbb.CreateAdd(ac, c0), acc2, llvm::Align(8));
      break;
    }
    case TypeKind::Min:
    case TypeKind::Max: {
      auto *set = cbb.CreateAlignedLoad(
          i64t(), cbb.CreateInBoundsGEP(b_.getInt8Ty(), p, i64(8)),
          llvm::Align(8));
      auto *aset = cbb.CreateAlignedLoad(i64t(), acc2, llvm::Align(8));
      bool is_min = vt.kind == TypeKind::Min;
      auto *better = is_min ? (vt.agg_signed ? cbb.CreateICmpSLT(v0, a0)
                                             : cbb.CreateICmpULT(v0, a0))
                            : (vt.agg_signed ? cbb.CreateICmpSGT(v0, a0)
                                             : cbb.CreateICmpUGT(v0, a0));
      auto *take =
          cbb.CreateAnd(cbb.CreateICmpNE(set, i64(0)),
                        cbb.CreateOr(cbb.CreateICmpEQ(aset, i64(0)), better));
      cbb.CreateAlignedStore(cbb.CreateSelect(take, v0, a0), acc,
                             llvm::Align(8));
      cbb.CreateAlignedStore(cbb.CreateSelect(take, i64(1), aset), acc2,
                             llvm::Align(8));
      break;
    }
    default: // count, sum
      cbb.CreateAlignedStore(cbb.CreateAdd(a0, v0), acc, llvm::Align(8));
      break;
    }
    cbb.CreateBr(out);
    cbb.SetInsertPoint(out);
    cbb.CreateRet(i64(0));
    cbb.SetInsertPoint(none);
    cbb.CreateRet(i64(1));
  }

  auto &gm = map_of(abi::kGlobalsMap);
  auto *gkey = entry_alloca(4, "gkey");
  b_.CreateAlignedStore(b_.getInt32(0), gkey, llvm::Align(4));
  auto *g = helper(BPF_FUNC_map_lookup_elem, ptrt(), {map_ptr(gm), gkey});
  auto *data = entry_alloca(24, "fold", /*stack_only=*/true); // holds a pointer
  b_.CreateAlignedStore(key, data, llvm::Align(8));
  b_.CreateAlignedStore(i64(0), byte_ptr(data, 8), llvm::Align(8));
  b_.CreateAlignedStore(i64(0), byte_ptr(data, 16), llvm::Align(8));
  auto *have_g = block("slots.globals");
  auto *done = block("slots.done");
  b_.CreateCondBr(b_.CreateIsNull(g), done, have_g);
  b_.SetInsertPoint(have_g);
  auto *n = b_.CreateAlignedLoad(
      i64t(), byte_ptr(g, offsetof(abi::Globals, ncpus)), llvm::Align(8));
  helper(BPF_FUNC_loop, i64t(), {n, cb, data, i64(0)});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::Value *total =
      b_.CreateAlignedLoad(i64t(), byte_ptr(data, 8), llvm::Align(8));
  if (vt.kind == TypeKind::Avg) {
    auto *cnt =
        b_.CreateAlignedLoad(i64t(), byte_ptr(data, 16), llvm::Align(8));
    auto *safe = b_.CreateSelect(b_.CreateICmpEQ(cnt, i64(0)), i64(1), cnt);
    total =
        vt.agg_signed ? signed_div(total, safe) : b_.CreateUDiv(total, safe);
  }
  return total;
}

Val IRGen::gen_map_read(Map &m) {
  MapGen &mg = map_of(m.name);
  auto *key = gen_key(m, mg);
  const Type &vt = mg.info->value;
  if (mg.spec.agg != runtime::AggKind::None) {
    if (vt.kind == TypeKind::Stats || vt.kind == TypeKind::Hist ||
        vt.kind == TypeKind::LHist || vt.kind == TypeKind::TSeries) {
      fail(m.loc,
           "reading a " + type_str(vt) + " map as a value is not supported");
      return {i64(0), false};
    }
    return {sum_slots(mg, key), false};
  }
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {map_ptr(mg), key});
  // bpftrace reports a missing element with retcode 0.
  check_helper(b_.CreateIsNull(p), i64(0), BPF_FUNC_map_lookup_elem,
               "map_lookup_elem", m.loc);
  if (is_scalar(mg.value) || mg.value.kind == TypeKind::Boolean)
    return {load_or_zero(p, mg.value), false};
  auto *out = entry_alloca(mg.value.size, "mapval");
  zero(out, mg.value.size);
  auto *has = block("read.found");
  auto *done = block("read.done");
  b_.CreateCondBr(b_.CreateIsNull(p), done, has);
  b_.SetInsertPoint(has);
  copy(out, p, mg.value.size);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return {out, true};
}

void IRGen::gen_map_assign(AssignMap &s) {
  MapGen &mg = map_of(s.map->name);
  if (auto *c = dyn_cast<Call>(s.value); c && c->type.is_aggregation()) {
    gen_aggregate(*s.map, *c);
    return;
  }
  Val v = gen(s.value);
  auto *key = gen_key(*s.map, mg);
  auto *val = entry_alloca(mg.spec.value_size, "val");
  if (!is_scalar(mg.value))
    zero(val, mg.spec.value_size);
  store_value(val, mg.value, v, s.value->type);
  helper(BPF_FUNC_map_update_elem, i64t(),
         {map_ptr(mg), key, val, i64(BPF_ANY)});
}

// Adds `v` to the u64 at `p`: a plain add on the host (the slot is the
// thread's own), a device atomic on the GPU (all threads share it).
static void add_to(IRGen &g, llvm::Value *p, llvm::Value *v) {
  if (g.gpu_) {
    g.b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, p, v, llvm::Align(8),
                         llvm::AtomicOrdering::Monotonic);
    return;
  }
  auto *old = g.b_.CreateAlignedLoad(g.i64t(), p, llvm::Align(8));
  g.b_.CreateAlignedStore(g.b_.CreateAdd(old, v), p, llvm::Align(8));
}

void IRGen::gen_aggregate(Map &m, Call &c) {
  MapGen &mg = map_of(m.name);
  llvm::Value *arg = nullptr;
  if (!c.args.empty())
    arg = gen_scalar(c.args[0]);
  auto *key = gen_key(m, mg);
  auto *p = lookup_or_init(mg, key);
  auto *have = block("agg.update");
  auto *done = block("agg.done");
  b_.CreateCondBr(b_.CreateIsNull(p), done, have);
  b_.SetInsertPoint(have);
  const Type &t = c.type;
  switch (t.kind) {
  case TypeKind::Count:
    add_to(*this, p, i64(1));
    break;
  case TypeKind::Sum:
    add_to(*this, p, arg);
    break;
  case TypeKind::Avg:
  case TypeKind::Stats:
    add_to(*this, p, arg);
    add_to(*this, byte_ptr(p, 8), i64(1));
    break;
  case TypeKind::Min:
  case TypeKind::Max: {
    bool is_min = t.kind == TypeKind::Min;
    bool sign = mg.info->value.agg_signed;
    if (gpu_) {
      // GPU: a device atomic min/max (BPF has none; a CAS loop would make
      // a warp retry). Device maps start the value at the identity, so
      // there is no is-set test; every sample marks the value set.
      helper(is_min ? runtime::gpu::kHelperGpuAtomicMin
                    : runtime::gpu::kHelperGpuAtomicMax,
             i64t(), {map_ptr(mg), p, arg, i64(sign ? 1 : 0)});
      b_.CreateAlignedStore(i64(1), byte_ptr(p, 8), llvm::Align(8));
      break;
    }
    auto *cur = b_.CreateAlignedLoad(i64t(), p, llvm::Align(8));
    auto *set = b_.CreateAlignedLoad(i64t(), byte_ptr(p, 8), llvm::Align(8));
    auto *better =
        is_min
            ? (sign ? b_.CreateICmpSLT(arg, cur) : b_.CreateICmpULT(arg, cur))
            : (sign ? b_.CreateICmpSGT(arg, cur) : b_.CreateICmpUGT(arg, cur));
    auto *write = block("agg.write");
    b_.CreateCondBr(b_.CreateOr(b_.CreateICmpEQ(set, i64(0)), better), write,
                    done);
    b_.SetInsertPoint(write);
    b_.CreateAlignedStore(arg, p, llvm::Align(8));
    b_.CreateAlignedStore(i64(1), byte_ptr(p, 8), llvm::Align(8));
    break;
  }
  case TypeKind::Hist: {
    // bpftrace's log2 buckets: 0 for negative values, 1 + v below 2^k, then
    // 2^k buckets per power of two.
    uint64_t k = t.hist_bits;
    uint64_t mask = (1ull << k) - 1;
    auto *pre = b_.GetInsertBlock();
    auto *neg = b_.CreateICmpSLT(arg, i64(0));
    auto *small = b_.CreateICmpULE(arg, i64(mask));
    auto *small_idx = b_.CreateSelect(neg, i64(0), b_.CreateAdd(arg, i64(1)));
    auto *big = block("hist.big");
    auto *idx_done = block("hist.index");
    b_.CreateCondBr(b_.CreateOr(neg, small), idx_done, big);
    b_.SetInsertPoint(big);
    llvm::Value *n = arg, *l = i64(0);
    for (int i = 5; i >= 0; i--) {
      auto *ge =
          b_.CreateZExt(b_.CreateICmpUGE(n, i64(1ull << (1u << i))), i64t());
      auto *shift = b_.CreateShl(ge, i64(i));
      n = b_.CreateLShr(n, shift);
      l = b_.CreateAdd(l, shift);
    }
    l = b_.CreateSub(l, i64(k));
    auto *x = b_.CreateAnd(b_.CreateLShr(arg, l), i64(mask));
    auto *big_idx = b_.CreateAdd(
        b_.CreateAdd(b_.CreateShl(b_.CreateAdd(l, i64(1)), i64(k)), x), i64(1));
    auto *from_big = b_.GetInsertBlock();
    b_.CreateBr(idx_done);
    b_.SetInsertPoint(idx_done);
    auto *idx = b_.CreatePHI(i64t(), 2);
    idx->addIncoming(small_idx, pre);
    idx->addIncoming(big_idx, from_big);
    uint64_t nb = runtime::hist_buckets(static_cast<uint32_t>(k));
    auto *clamped =
        b_.CreateSelect(b_.CreateICmpULT(idx, i64(nb)), idx, i64(nb - 1));
    auto *bucket =
        b_.CreateInBoundsGEP(b_.getInt8Ty(), p, b_.CreateMul(clamped, i64(8)));
    add_to(*this, bucket, i64(1));
    break;
  }
  case TypeKind::TSeries:
    gen_tseries(mg, p, arg, t, c.loc);
    break;
  case TypeKind::LHist: {
    int64_t mn = t.lhist_min, mx = t.lhist_max, step = t.lhist_step;
    uint64_t last = static_cast<uint64_t>((mx - mn) / step) + 1;
    auto *below = b_.CreateICmpSLT(arg, i64(static_cast<uint64_t>(mn)));
    auto *above = b_.CreateICmpSGT(arg, i64(static_cast<uint64_t>(mx)));
    auto *in = b_.CreateAdd(
        b_.CreateUDiv(b_.CreateSub(arg, i64(static_cast<uint64_t>(mn))),
                      i64(static_cast<uint64_t>(step))),
        i64(1));
    llvm::Value *idx =
        b_.CreateSelect(below, i64(0), b_.CreateSelect(above, i64(last), in));
    idx = b_.CreateSelect(b_.CreateICmpULE(idx, i64(last)), idx, i64(last));
    auto *bucket =
        b_.CreateInBoundsGEP(b_.getInt8Ty(), p, b_.CreateMul(idx, i64(8)));
    add_to(*this, bucket, i64(1));
    break;
  }
  default:
    fail(c.loc, "BUG: unknown aggregation " + c.name);
    break;
  }
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

static_assert(static_cast<int>(runtime::TSeriesAgg::Sum) ==
                  static_cast<int>(ast::TSeriesAgg::Sum),
              "ast and runtime number tseries aggregations alike");
static_assert(sizeof(runtime::TSeriesBucket) == 24);

// The time tseries() buckets by: the wall clock (CLOCK_MONOTONIC plus the
// offset the CLI measured at start), or, for tests, a scalar map named by
// UBTRACE_DUMMY_TS_MAP (or BPFTRACE_DUMMY_TS_MAP) that the script advances.
llvm::Value *IRGen::tseries_now(const Location &loc) {
  const char *dummy = std::getenv("UBTRACE_DUMMY_TS_MAP");
  if (!dummy)
    dummy = std::getenv("BPFTRACE_DUMMY_TS_MAP");
  if (!dummy || !*dummy)
    return b_.CreateAdd(
        helper(BPF_FUNC_ktime_get_ns, i64t(), {}),
        globals_field(offsetof(abi::Globals, realtime_offset_ns)));
  auto it = ast_.maps.find(dummy);
  if (it == ast_.maps.end() || !it->second.key.is_none() ||
      !it->second.value.is_int() || it->second.value.is_signed) {
    fail(loc, std::string("the dummy time map ") + dummy +
                  " must be a scalar map of an unsigned integer");
    return i64(0);
  }
  MapGen &mg = map_of(dummy);
  auto *key = entry_alloca(8, "tskey");
  b_.CreateAlignedStore(i64(0), key, llvm::Align(8));
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {map_ptr(mg), key});
  return load_or_zero(p, mg.value);
}

// tseries(n, interval, count[, agg]): the bucket of the current interval
// (epoch % count) is reset when it last held another interval (for the
// aggregations; Last just overwrites), then updated; the slot is this
// thread's own, so plain loads and stores suffice.
void IRGen::gen_tseries(MapGen &mg, llvm::Value *p, llvm::Value *arg,
                        const Type &t, const Location &loc) {
  auto agg = static_cast<TSeriesAgg>(t.ts_agg);
  uint64_t count = t.ts_intervals;
  llvm::Value *now = tseries_now(loc);
  auto *epoch = b_.CreateUDiv(now, i64(t.ts_interval_ns));
  auto *idx = b_.CreateURem(epoch, i64(count));
  idx = b_.CreateSelect(b_.CreateICmpULT(idx, i64(count)), idx, i64(count - 1));
  auto *bucket = b_.CreateInBoundsGEP(
      b_.getInt8Ty(), p,
      b_.CreateMul(idx, i64(sizeof(runtime::TSeriesBucket))));
  auto *value_p = bucket;
  auto *meta_p = byte_ptr(bucket, offsetof(runtime::TSeriesBucket, meta));
  auto *epoch_p = byte_ptr(bucket, offsetof(runtime::TSeriesBucket, epoch));
  auto load = [&](llvm::Value *at) {
    return b_.CreateAlignedLoad(i64t(), at, llvm::Align(8));
  };
  auto store = [&](llvm::Value *v, llvm::Value *at) {
    b_.CreateAlignedStore(v, at, llvm::Align(8));
  };
  if (agg != TSeriesAgg::Last) {
    auto *fresh = b_.CreateICmpNE(load(epoch_p), epoch);
    store(b_.CreateSelect(fresh, i64(0), load(value_p)), value_p);
    store(b_.CreateSelect(fresh, i64(0), load(meta_p)), meta_p);
  }
  bool sign = mg.info->value.agg_signed;
  switch (agg) {
  case TSeriesAgg::Last:
    store(arg, value_p);
    store(now, meta_p);
    break;
  case TSeriesAgg::Avg:
    store(b_.CreateAdd(load(meta_p), i64(1)), meta_p);
    store(b_.CreateAdd(load(value_p), arg), value_p);
    break;
  case TSeriesAgg::Sum:
    store(b_.CreateAdd(load(value_p), arg), value_p);
    break;
  case TSeriesAgg::Max:
  case TSeriesAgg::Min: {
    auto *cur = load(value_p);
    auto *better =
        agg == TSeriesAgg::Min
            ? (sign ? b_.CreateICmpSLT(arg, cur) : b_.CreateICmpULT(arg, cur))
            : (sign ? b_.CreateICmpSGT(arg, cur) : b_.CreateICmpUGT(arg, cur));
    auto *unset = b_.CreateICmpEQ(load(meta_p), i64(0));
    store(b_.CreateSelect(b_.CreateOr(unset, better), arg, cur), value_p);
    store(i64(1), meta_p);
    break;
  }
  }
  store(epoch, epoch_p);
}

Val IRGen::gen_incdec(Unop &e) {
  bool inc = e.op == UnOp::PreInc || e.op == UnOp::PostInc;
  bool post = e.op == UnOp::PostInc || e.op == UnOp::PostDec;
  Type t = storage_type(e.type);
  // A pointer steps by its pointee's size, as in C (storage_type() has
  // made it a plain integer: look at the checked type).
  uint64_t step = 1;
  if (e.type.kind == TypeKind::Pointer && e.type.elem && e.type.elem->size)
    step = e.type.elem->size;
  if (auto *v = dyn_cast<Variable>(e.expr)) {
    auto *slot = var_slot(v->name);
    Type vt = var_types_.count(v->name) ? var_types_[v->name] : t;
    auto *old = load_int(slot, vt);
    auto *nv =
        inc ? b_.CreateAdd(old, i64(step)) : b_.CreateSub(old, i64(step));
    store_int(slot, nv, vt);
    return {post ? old : nv, false};
  }
  auto *m = static_cast<Map *>(e.expr);
  MapGen &mg = map_of(m->name);
  auto *key = gen_key(*m, mg);
  auto *p = lookup_or_init(mg, key);
  auto *from = b_.GetInsertBlock();
  auto *have = block("incdec.update");
  auto *done = block("incdec.done");
  b_.CreateCondBr(b_.CreateIsNull(p), done, have);
  b_.SetInsertPoint(have);
  auto *old = load_int(p, mg.value);
  auto *nv = inc ? b_.CreateAdd(old, i64(step)) : b_.CreateSub(old, i64(step));
  store_int(p, nv, mg.value);
  auto *from_have = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(i64t(), 2);
  phi->addIncoming(i64(0), from);
  phi->addIncoming(post ? old : nv, from_have);
  return {phi, false};
}

} // namespace ubtrace::codegen
