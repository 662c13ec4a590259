// Builtins and function calls.
#include "ast/builtins.h"
#include "ast/signals.h"
#include "codegen/irgen.h"
#include "runtime/gpu/gpu_helper_ids.h"

#include <arpa/inet.h>
#include <cstring>
#include <linux/bpf.h>
#include <sys/stat.h>

namespace ubtrace::codegen {

using namespace ast;

llvm::Value *IRGen::globals_field(uint32_t offset) {
  auto &gm = map_of(abi::kGlobalsMap);
  auto *key = entry_alloca(4, "gkey");
  b_.CreateAlignedStore(b_.getInt32(0), key, llvm::Align(4));
  auto *g = helper(BPF_FUNC_map_lookup_elem, ptrt(), {gm.gv, key});
  auto *from = b_.GetInsertBlock();
  auto *has = block("globals.has");
  auto *done = block("globals.done");
  b_.CreateCondBr(b_.CreateIsNull(g), done, has);
  b_.SetInsertPoint(has);
  auto *v = b_.CreateAlignedLoad(i64t(), byte_ptr(g, offset), llvm::Align(8));
  auto *from_has = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(i64t(), 2);
  phi->addIncoming(i64(0), from);
  phi->addIncoming(v, from_has);
  return phi;
}

Val IRGen::gen_builtin(BuiltinVar var, int index, const std::string &name,
                       Expr &e) {
  auto ctx_load = [&](uint32_t offset) {
    return b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, offset), llvm::Align(8));
  };
  auto nsecs = [&]() -> llvm::Value * {
    return gpu_ ? helper(abi::kHelperGpuGlobalTimer, i64t(), {})
                : helper(BPF_FUNC_ktime_get_ns, i64t(), {});
  };

  switch (var) {
  case BuiltinVar::Pid:
  case BuiltinVar::Tid: {
    auto *v = helper(BPF_FUNC_get_current_pid_tgid, i64t(), {});
    return {var == BuiltinVar::Pid ? b_.CreateLShr(v, i64(32))
                                   : b_.CreateAnd(v, i64(0xffffffff)),
            false};
  }
  case BuiltinVar::Uid:
  case BuiltinVar::Gid:
  case BuiltinVar::Username: {
    auto *v = helper(BPF_FUNC_get_current_uid_gid, i64t(), {});
    return {var == BuiltinVar::Gid ? b_.CreateLShr(v, i64(32))
                                   : b_.CreateAnd(v, i64(0xffffffff)),
            false};
  }
  case BuiltinVar::Nsecs: {
    return {nsecs(), false};
  }
  case BuiltinVar::Elapsed: {
    return {
        b_.CreateSub(nsecs(), globals_field(offsetof(abi::Globals, start_ns))),
        false};
  }
  case BuiltinVar::Cpu: {
    return {
        b_.CreateZExt(
            helper(BPF_FUNC_get_smp_processor_id, b_.getInt32Ty(), {}), i64t()),
        false};
  }
  case BuiltinVar::Rand: {
    return {b_.CreateZExt(helper(BPF_FUNC_get_prandom_u32, b_.getInt32Ty(), {}),
                          i64t()),
            false};
  }
  case BuiltinVar::Cgroup: {
    return {helper(BPF_FUNC_get_current_cgroup_id, i64t(), {}), false};
  }
  case BuiltinVar::Numaid: {
    return {helper(BPF_FUNC_get_numa_node_id, i64t(), {}), false};
  }
  case BuiltinVar::Jiffies: {
    return {helper(BPF_FUNC_jiffies64, i64t(), {}), false};
  }
  case BuiltinVar::Curtask: {
    return {helper(BPF_FUNC_get_current_task, i64t(), {}), false};
  }
  case BuiltinVar::Usermode: {
    return {i64(1), false};
  }
  case BuiltinVar::Ncpus: {
    return {i64(ncpus_), false};
  }
  case BuiltinVar::Cpid: {
    return {globals_field(offsetof(abi::Globals, cpid)), false};
  }
  case BuiltinVar::Ctx: {
    return {b_.CreatePtrToInt(ctx_, i64t()), false};
  }
  case BuiltinVar::Comm: {
    auto *buf = entry_alloca(16, "comm");
    zero(buf, 16);
    helper(BPF_FUNC_get_current_comm, i64t(), {buf, i64(16)});
    return {buf, true};
  }
  case BuiltinVar::Probe: {
    // GPU: the NVPTX target picks the attach point that fired by the
    // context's site and kernel (runtime/gpu/gpu_helper_ids.h); this
    // block's attach points are pushed after its code, from this index on.
    if (gpu_)
      return {helper(runtime::gpu::kHelperGpuProbeId, i64t(),
                     {ctx_, i64(bundle_.probes.size())}),
              false};
    return {ctx_load(abi::kCtxProbeId), false};
  }
  case BuiltinVar::Func: {
    if (gpu_) {
      // A usym of the kernel: its id, and a pid no process has; the CLI
      // prints the kernel's name for it.
      auto *buf = entry_alloca(16, "func");
      b_.CreateAlignedStore(
          helper(runtime::gpu::kHelperGpuKernelId, i64t(), {ctx_}), buf,
          llvm::Align(8));
      b_.CreateAlignedStore(
          i64(static_cast<uint64_t>(runtime::gpu::kGpuFuncPid)),
          byte_ptr(buf, 8), llvm::Align(8));
      return {buf, true};
    }
    auto *buf = entry_alloca(16, "func");
    b_.CreateAlignedStore(ctx_load(abi::kCtxFuncIp), buf, llvm::Align(8));
    auto *pid = b_.CreateLShr(helper(BPF_FUNC_get_current_pid_tgid, i64t(), {}),
                              i64(32));
    b_.CreateAlignedStore(pid, byte_ptr(buf, 8), llvm::Align(8));
    return {buf, true};
  }
  case BuiltinVar::Retval: {
    return {ctx_load(abi::kRax), false};
  }
  case BuiltinVar::Arg: {
    int n = index;
    if (gpu_)
      return {ctx_load(abi::kGpuCtxArgs + 8 * n), false};
    if (mixed_usdt_) {
      fail(e.loc, name +
                      " reads USDT arguments in usdt probes and registers in "
                      "others: split the probe");
      return {i64(0), false};
    }
    if (usdt_) {
      // The agent decoded the site's arguments into the ctx.
      if (n >= static_cast<int>(abi::kUsdtMaxArgs)) {
        fail(e.loc, "USDT probes have at most " +
                        std::to_string(abi::kUsdtMaxArgs) + " arguments");
        return {i64(0), false};
      }
      return {ctx_load(abi::kCtxUsdtArgs + 8 * n), false};
    }
    if (n < 6)
      return {ctx_load(abi::kArgRegs[n]), false};
    // The 7th argument and on are on the stack, above the return address.
    auto *sp = ctx_load(abi::kRsp);
    auto *dst = entry_alloca(8, "arg");
    b_.CreateAlignedStore(i64(0), dst, llvm::Align(8));
    probe_read(dst, 8,
               b_.CreateIntToPtr(b_.CreateAdd(sp, i64(8 * (n - 5))), ptrt()));
    return {b_.CreateAlignedLoad(i64t(), dst, llvm::Align(8)), false};
  }
  case BuiltinVar::Sarg: {
    int n = index;
    auto *sp = ctx_load(abi::kRsp);
    auto *dst = entry_alloca(8, "sarg");
    b_.CreateAlignedStore(i64(0), dst, llvm::Align(8));
    probe_read(dst, 8,
               b_.CreateIntToPtr(b_.CreateAdd(sp, i64(8 * (n + 1))), ptrt()));
    return {b_.CreateAlignedLoad(i64t(), dst, llvm::Align(8)), false};
  }
  case BuiltinVar::Ustack:
  case BuiltinVar::Kstack: {
    Type t = e.type;
    uint32_t size = t.size;
    auto *buf = entry_alloca(size, name);
    zero(buf, size);
    uint64_t flags = var == BuiltinVar::Ustack ? BPF_F_USER_STACK : 0;
    auto *n =
        helper(BPF_FUNC_get_stack, i64t(),
               {ctx_, byte_ptr(buf, 8), i64(8 * t.stack_limit), i64(flags)});
    auto *frames = b_.CreateSelect(b_.CreateICmpSLT(n, i64(0)), i64(0),
                                   b_.CreateUDiv(n, i64(8)));
    b_.CreateAlignedStore(frames, buf, llvm::Align(8));
    if (var == BuiltinVar::Ustack) {
      auto *pid = b_.CreateLShr(
          helper(BPF_FUNC_get_current_pid_tgid, i64t(), {}), i64(32));
      b_.CreateAlignedStore(pid, byte_ptr(buf, 8 + 8 * t.stack_limit),
                            llvm::Align(8));
    }
    return {buf, true};
  }
  case BuiltinVar::Smid:
  case BuiltinVar::Warpid:
  case BuiltinVar::Laneid: {
    int h = var == BuiltinVar::Smid     ? abi::kHelperGpuSmId
            : var == BuiltinVar::Warpid ? abi::kHelperGpuWarpId
                                        : abi::kHelperGpuLaneId;
    return {helper(h, i64t(), {}), false};
  }
  case BuiltinVar::ThreadIdx:
  case BuiltinVar::BlockIdx:
  case BuiltinVar::BlockDim:
  case BuiltinVar::GridDim: {
    int base = var == BuiltinVar::ThreadIdx  ? abi::kHelperGpuThreadIdxX
               : var == BuiltinVar::BlockIdx ? abi::kHelperGpuBlockIdxX
               : var == BuiltinVar::BlockDim ? abi::kHelperGpuBlockDimX
                                             : abi::kHelperGpuGridDimX;
    auto *buf = entry_alloca(12, name);
    for (int i = 0; i < 3; i++)
      store_int(byte_ptr(buf, 4 * i), helper(base + i, i64t(), {}),
                make_int(4, false));
    return {buf, true};
  }
  case BuiltinVar::Args:
  case BuiltinVar::BuiltinProbe:
  case BuiltinVar::BuiltinProbetype:
  case BuiltinVar::BuiltinArch:
    break;
  }
  fail(e.loc,
       "the builtin " + name + " is not supported by ubtrace's code generator");
  return {i64(0), false};
}

Val IRGen::gen_call(Call &c) {
  const std::string &n = c.name;
  auto &A = c.args;
  switch (c.fn) {
  case BuiltinFn::Printf:
  case BuiltinFn::Debugf: {
    gen_format_event(abi::EventType::Printf, bundle_.printf_formats, c);
    return {i64(0), false};
  }
  case BuiltinFn::Errorf:
  case BuiltinFn::Warnf: {
    gen_format_event(c.fn == BuiltinFn::Errorf ? abi::EventType::Errorf
                                               : abi::EventType::Warnf,
                     bundle_.printf_formats, c);
    return {i64(0), false};
  }
  case BuiltinFn::System: {
    gen_format_event(abi::EventType::System, bundle_.system_formats, c);
    return {i64(0), false};
  }
  case BuiltinFn::Cat: {
    gen_format_event(abi::EventType::Cat, bundle_.cat_formats, c);
    return {i64(0), false};
  }
  case BuiltinFn::Print: {
    return gen_print(c);
  }
  case BuiltinFn::Join: {
    return gen_join(c);
  }
  case BuiltinFn::Clear:
  case BuiltinFn::Zero: {
    auto &mg = map_of(static_cast<Map *>(A[0])->name);
    gen_simple_event(c.fn == BuiltinFn::Clear ? abi::EventType::ClearMap
                                              : abi::EventType::ZeroMap,
                     mg.id);
    return {i64(0), false};
  }
  case BuiltinFn::Exit: {
    llvm::Value *code = A.empty() ? i64(0) : gen_scalar(A[0]);
    uint32_t size = sizeof(abi::EventHeader);
    auto *buf = entry_alloca(size, "event");
    b_.CreateAlignedStore(i64(static_cast<uint64_t>(abi::EventType::Exit)), buf,
                          llvm::Align(8));
    b_.CreateAlignedStore(code, byte_ptr(buf, 8), llvm::Align(8));
    emit_event(buf, size);
    // exit() returns from the probe, as bpftrace's implicit return after it
    // does: what follows is dead code.
    gen_return();
    b_.SetInsertPoint(block("after.exit"));
    return {i64(0), false};
  }
  case BuiltinFn::Time: {
    std::string fmt =
        A.empty() ? "%H:%M:%S\n" : static_cast<String *>(A[0])->value;
    uint64_t id = bundle_.time_formats.size();
    bundle_.time_formats.push_back(fmt);
    gen_simple_event(abi::EventType::Time, id);
    return {i64(0), false};
  }
  case BuiltinFn::Strftime: {
    uint64_t id = bundle_.time_formats.size();
    bundle_.time_formats.push_back(static_cast<String *>(A[0])->value);
    auto *ns = gen_scalar(A[1]);
    auto *buf = entry_alloca(16, "strftime");
    b_.CreateAlignedStore(i64(id), buf, llvm::Align(8));
    b_.CreateAlignedStore(ns, byte_ptr(buf, 8), llvm::Align(8));
    return {buf, true};
  }
  case BuiltinFn::Delete:
  case BuiltinFn::HasKey: {
    auto *m = static_cast<Map *>(A[0]);
    MapGen &mg = map_of(m->name);
    llvm::Value *key =
        A.size() == 2 ? gen_key_from(A[1], mg, c.loc) : gen_key(*m, mg);
    if (c.fn == BuiltinFn::Delete) {
      if (mg.bpf_type == BPF_MAP_TYPE_PERCPU_ARRAY) {
        // An array entry cannot go: it is reset to its unset value.
        gen_simple_event(abi::EventType::ClearMap, mg.id);
        return {i64(1), false};
      }
      auto *rc = helper(BPF_FUNC_map_delete_elem, i64t(), {mg.gv, key});
      return {b_.CreateZExt(b_.CreateICmpEQ(rc, i64(0)), i64t()), false};
    }
    auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {mg.gv, key});
    return {b_.CreateZExt(b_.CreateIsNotNull(p), i64t()), false};
  }
  case BuiltinFn::Len: {
    Type t = A[0]->type;
    if (t.kind == TypeKind::UStack || t.kind == TypeKind::KStack) {
      Val v = gen(A[0]);
      return {b_.CreateAlignedLoad(i64t(), v.v, llvm::Align(8)), false};
    }
    // Count entries: a for_each callback that adds one per entry.
    auto &mg = map_of(static_cast<Map *>(A[0])->name);
    auto *counter = entry_alloca(8, "len");
    b_.CreateAlignedStore(i64(0), counter, llvm::Align(8));
    auto *cb_ty = llvm::FunctionType::get(
        i64t(), {ptrt(), ptrt(), ptrt(), ptrt()}, false);
    auto *cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                      "len_cb", *mod_);
    cb->setSection(".text");
    auto *di_ptr = di_->createPointerType(nullptr, 64);
    auto *sp =
        di_->createFunction(cu_, "len_cb", "len_cb", difile_, c.loc.begin.line,
                            di_->createSubroutineType(di_->getOrCreateTypeArray(
                                {di_int(), di_ptr, di_ptr, di_ptr, di_ptr})),
                            c.loc.begin.line, llvm::DINode::FlagPrototyped,
                            llvm::DISubprogram::SPFlagDefinition |
                                llvm::DISubprogram::SPFlagLocalToUnit);
    const char *pnames[] = {"map", "key", "value", "data"};
    for (unsigned i = 0; i < 4; i++)
      di_->createParameterVariable(sp, pnames[i], i + 1, difile_,
                                   c.loc.begin.line, di_ptr, true);
    cb->setSubprogram(sp);
    {
      llvm::IRBuilder<> cbb(llvm::BasicBlock::Create(*llctx_, "entry", cb));
      auto *cp = cb->getArg(3);
      auto *old = cbb.CreateAlignedLoad(i64t(), cp, llvm::Align(8));
      cbb.CreateAlignedStore(cbb.CreateAdd(old, i64(1)), cp, llvm::Align(8));
      cbb.CreateRet(i64(0));
    }
    helper(BPF_FUNC_for_each_map_elem, i64t(), {mg.gv, cb, counter, i64(0)});
    return {b_.CreateAlignedLoad(i64t(), counter, llvm::Align(8)), false};
  }
  case BuiltinFn::Str: {
    Type t = c.type;
    uint32_t size = t.size;
    // As bpftrace does below 1024 bytes, read one byte more than the string
    // holds: a source too long to fit leaves the string without its NUL,
    // which the printer shows with the truncation trailer ("abcdefgh..").
    uint32_t pad = size < 1024 ? 1 : 0;
    auto *buf = entry_alloca(size + pad, "str");
    zero(buf, size + pad);
    Type at = A[0]->type;
    if (at.kind == TypeKind::String) {
      Val v = gen(A[0]);
      uint32_t copy_n = std::min(size, at.size);
      copy(buf, v.v, copy_n);
      if (A.size() == 2) {
        // str(s, n): at most n characters.
        auto *len = gen_scalar(A[1]);
        auto *cut = b_.CreateSelect(b_.CreateICmpULT(len, i64(size - 1 + pad)),
                                    len, i64(size - 1 + pad));
        b_.CreateStore(b_.getInt8(0),
                       b_.CreateInBoundsGEP(b_.getInt8Ty(), buf, cut));
      }
      if (!pad)
        b_.CreateStore(b_.getInt8(0), byte_ptr(buf, size - 1));
      return {buf, true};
    }
    llvm::Value *len = i64(size + pad);
    if (A.size() == 2) {
      // str(p, n): n characters and the NUL, as an unsigned min taken
      // before the + 1, so the size is never 0 (n = -1 reads it all).
      auto *n = gen_scalar(A[1]);
      auto *cap = i64(size + pad - 1);
      len = b_.CreateAdd(b_.CreateSelect(b_.CreateICmpULT(n, cap), n, cap),
                         i64(1));
    }
    llvm::Value *src = at.kind == TypeKind::Array
                           ? to_mem(gen(A[0]), at)
                           : b_.CreateIntToPtr(gen_scalar(A[0]), ptrt());
    helper(BPF_FUNC_probe_read_user_str, i64t(), {buf, len, src});
    return {buf, true};
  }
  case BuiltinFn::Buf: {
    Type t = c.type;
    uint32_t cap = t.size - 4;
    auto *out = entry_alloca(t.size, "buf");
    zero(out, t.size);
    Type at = A[0]->type;
    llvm::Value *len = i64(cap);
    if (A.size() == 2) {
      auto *want = gen_scalar(A[1]);
      len = b_.CreateSelect(b_.CreateICmpULT(want, i64(cap)), want, i64(cap));
    }
    if (at.kind == TypeKind::Array || at.kind == TypeKind::String) {
      // Values in memory (arrays, strings): copy their bytes.
      Val v = gen(A[0]);
      copy(byte_ptr(out, 4), v.v, std::min(cap, at.size));
    } else {
      auto *src = b_.CreateIntToPtr(gen_scalar(A[0]), ptrt());
      if (gpu_ && A.size() == 2)
        // Only the bytes asked for: a GPU cannot survive a read past the
        // end of an allocation, which the host's fault-safe read can.
        helper(BPF_FUNC_probe_read_user, i64t(), {byte_ptr(out, 4), len, src});
      else
        probe_read(byte_ptr(out, 4), cap, src);
    }
    store_int(out, len, make_int(4, false));
    return {out, true};
  }
  case BuiltinFn::Ustack:
    return gen_builtin(BuiltinVar::Ustack, 0, n, c);
  case BuiltinFn::Kstack:
    return gen_builtin(BuiltinVar::Kstack, 0, n, c);
  case BuiltinFn::Usym: {
    auto *buf = entry_alloca(16, "usym");
    b_.CreateAlignedStore(gen_scalar(A[0]), buf, llvm::Align(8));
    auto *pid = b_.CreateLShr(helper(BPF_FUNC_get_current_pid_tgid, i64t(), {}),
                              i64(32));
    b_.CreateAlignedStore(pid, byte_ptr(buf, 8), llvm::Align(8));
    return {buf, true};
  }
  case BuiltinFn::Ksym:
  case BuiltinFn::Kptr:
  case BuiltinFn::Uptr:
  case BuiltinFn::Strerror: {
    return {gen_scalar(A[0]), false};
  }
  case BuiltinFn::Reg: {
    static const std::map<std::string, uint32_t> regs = {
        {"r15", abi::kR15},      {"r14", abi::kR14},         {"r13", abi::kR13},
        {"r12", abi::kR12},      {"bp", abi::kRbp},          {"rbp", abi::kRbp},
        {"bx", abi::kRbx},       {"rbx", abi::kRbx},         {"r11", abi::kR11},
        {"r10", abi::kR10},      {"r9", abi::kR9},           {"r8", abi::kR8},
        {"ax", abi::kRax},       {"rax", abi::kRax},         {"cx", abi::kRcx},
        {"rcx", abi::kRcx},      {"dx", abi::kRdx},          {"rdx", abi::kRdx},
        {"si", abi::kRsi},       {"rsi", abi::kRsi},         {"di", abi::kRdi},
        {"rdi", abi::kRdi},      {"orig_ax", abi::kOrigRax}, {"ip", abi::kRip},
        {"rip", abi::kRip},      {"pc", abi::kRip},          {"cs", abi::kCs},
        {"flags", abi::kEflags}, {"sp", abi::kRsp},          {"rsp", abi::kRsp},
        {"ss", abi::kSs}};
    auto it = regs.find(static_cast<String *>(A[0])->value);
    return {b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, it->second),
                                 llvm::Align(8)),
            false};
  }
  case BuiltinFn::Ntop: {
    auto *out = entry_alloca(24, "inet");
    zero(out, 24);
    Expr *addr = A.back();
    Type at = addr->type;
    llvm::Value *af;
    if (A.size() == 2)
      af = gen_scalar(A[0]);
    else
      af = i64(at.size == 16 ? AF_INET6 : AF_INET);
    b_.CreateAlignedStore(af, out, llvm::Align(8));
    if (at.kind == TypeKind::Array) {
      Val v = gen(addr);
      copy(byte_ptr(out, 8), v.v, std::min<uint32_t>(16, at.size));
    } else if (at.kind == TypeKind::Pointer) {
      auto *src = b_.CreateIntToPtr(gen_scalar(addr), ptrt());
      auto *is6 = b_.CreateICmpEQ(af, i64(AF_INET6));
      auto *six = block("ntop.v6");
      auto *four = block("ntop.v4");
      auto *done = block("ntop.done");
      b_.CreateCondBr(is6, six, four);
      b_.SetInsertPoint(six);
      probe_read(byte_ptr(out, 8), 16, src);
      b_.CreateBr(done);
      b_.SetInsertPoint(four);
      probe_read(byte_ptr(out, 8), 4, src);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    } else {
      store_int(byte_ptr(out, 8), gen_scalar(addr), make_int(4, false));
    }
    return {out, true};
  }
  case BuiltinFn::Pton: {
    const std::string &text = static_cast<String *>(A[0])->value;
    unsigned char bytes[16] = {};
    bool v6 = text.find(':') != std::string::npos;
    if (inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), bytes) != 1) {
      fail(c.loc, "pton(): '" + text + "' is not an IPv4 or IPv6 address");
      return {i64(0), false};
    }
    uint32_t size = v6 ? 16 : 4;
    auto *out = entry_alloca(16, "pton");
    for (uint32_t i = 0; i < size; i++)
      b_.CreateStore(b_.getInt8(bytes[i]), byte_ptr(out, i));
    return {out, true};
  }
  case BuiltinFn::Macaddr: {
    auto *out = entry_alloca(8, "mac");
    zero(out, 8);
    Type at = A[0]->type;
    if (at.kind == TypeKind::Array || at.kind == TypeKind::String) {
      Val v = gen(A[0]);
      copy(out, v.v, std::min<uint32_t>(6, at.size));
    } else {
      probe_read(out, 6, b_.CreateIntToPtr(gen_scalar(A[0]), ptrt()));
    }
    return {out, true};
  }
  case BuiltinFn::Cgroupid: {
    struct stat st{};
    const std::string &path = static_cast<String *>(A[0])->value;
    if (stat(path.c_str(), &st) != 0) {
      fail(c.loc,
           "cgroupid(): cannot stat " + path + ": " + std::strerror(errno));
      return {i64(0), false};
    }
    return {i64(st.st_ino), false};
  }
  case BuiltinFn::Strncmp: {
    Val a = gen(A[0]), bv = gen(A[1]);
    int64_t limit = 0;
    if (auto *i = dyn_cast<Integer>(A[2]))
      limit = i->as_signed();
    uint32_t size =
        std::min<uint32_t>(std::min(A[0]->type.size, A[1]->type.size),
                           static_cast<uint32_t>(std::max<int64_t>(limit, 0)));
    auto *eq = gen_memcmp_eq(a.v, bv.v, size, true);
    return {b_.CreateZExt(b_.CreateNot(eq), i64t()), false};
  }
  case BuiltinFn::Strlen: {
    Val s = gen(A[0]);
    uint32_t size = A[0]->type.size;
    auto *len = entry_alloca(8, "strlen");
    b_.CreateAlignedStore(i64(size), len, llvm::Align(8));
    auto *done = block("strlen.done");
    for (uint32_t i = 0; i < size; i++) {
      auto *ch = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(s.v, i));
      auto *hit = block("strlen.hit");
      auto *next = block("strlen.next");
      b_.CreateCondBr(b_.CreateICmpEQ(ch, b_.getInt8(0)), hit, next);
      b_.SetInsertPoint(hit);
      b_.CreateAlignedStore(i64(i), len, llvm::Align(8));
      b_.CreateBr(done);
      b_.SetInsertPoint(next);
    }
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return {b_.CreateAlignedLoad(i64t(), len, llvm::Align(8)), false};
  }
  case BuiltinFn::Strcontains: {
    // Naive search, bounded by both capacities.
    Val h = gen(A[0]), nd = gen(A[1]);
    uint32_t hs = A[0]->type.size, ns = A[1]->type.size;
    auto *found = entry_alloca(8, "found");
    b_.CreateAlignedStore(i64(0), found, llvm::Align(8));
    auto *done = block("contains.done");
    // An empty needle is always contained.
    auto *empty = block("contains.empty");
    auto *nonempty = block("contains.search");
    b_.CreateCondBr(
        b_.CreateICmpEQ(b_.CreateLoad(b_.getInt8Ty(), nd.v), b_.getInt8(0)),
        empty, nonempty);
    b_.SetInsertPoint(empty);
    b_.CreateAlignedStore(i64(1), found, llvm::Align(8));
    b_.CreateBr(done);
    b_.SetInsertPoint(nonempty);
    auto *i_slot = entry_alloca(8, "ci");
    b_.CreateAlignedStore(i64(0), i_slot, llvm::Align(8));
    auto *outer = block("contains.outer");
    auto *outer_body = block("contains.at");
    auto *outer_next = block("contains.next");
    b_.CreateBr(outer);
    b_.SetInsertPoint(outer);
    auto *i = b_.CreateAlignedLoad(i64t(), i_slot, llvm::Align(8));
    b_.CreateCondBr(b_.CreateICmpULT(i, i64(hs)), outer_body, done);
    b_.SetInsertPoint(outer_body);
    // Compare the needle at position i.
    auto *match = block("contains.match");
    for (uint32_t j = 0; j + 1 < ns; j++) {
      auto *nc = b_.CreateLoad(b_.getInt8Ty(), byte_ptr(nd.v, j));
      auto *cont = block("contains.cmp");
      b_.CreateCondBr(b_.CreateICmpEQ(nc, b_.getInt8(0)), match, cont);
      b_.SetInsertPoint(cont);
      auto *pos = b_.CreateAdd(i, i64(j));
      auto *in = block("contains.in");
      b_.CreateCondBr(b_.CreateICmpULT(pos, i64(hs)), in, outer_next);
      b_.SetInsertPoint(in);
      auto *hc = b_.CreateLoad(b_.getInt8Ty(),
                               b_.CreateInBoundsGEP(b_.getInt8Ty(), h.v, pos));
      auto *same = block("contains.same");
      b_.CreateCondBr(b_.CreateICmpEQ(hc, nc), same, outer_next);
      b_.SetInsertPoint(same);
    }
    b_.CreateBr(match);
    b_.SetInsertPoint(match);
    b_.CreateAlignedStore(i64(1), found, llvm::Align(8));
    b_.CreateBr(done);
    b_.SetInsertPoint(outer_next);
    // Stop at the haystack's end.
    auto *hc = b_.CreateLoad(b_.getInt8Ty(),
                             b_.CreateInBoundsGEP(b_.getInt8Ty(), h.v, i));
    auto *adv = block("contains.advance");
    b_.CreateCondBr(b_.CreateICmpEQ(hc, b_.getInt8(0)), done, adv);
    b_.SetInsertPoint(adv);
    b_.CreateAlignedStore(b_.CreateAdd(i, i64(1)), i_slot, llvm::Align(8));
    b_.CreateBr(outer);
    b_.SetInsertPoint(done);
    return {b_.CreateAlignedLoad(i64t(), found, llvm::Align(8)), false};
  }
  case BuiltinFn::Bswap: {
    Type t = storage_type(A[0]->type);
    uint32_t size = t.size ? t.size : 8;
    auto *v = gen_scalar(A[0]);
    if (size == 1)
      return {v, false};
    auto *ity = llvm::Type::getIntNTy(*llctx_, 8 * size);
    auto *narrow = b_.CreateTrunc(v, ity);
    auto *swapped = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, narrow);
    return {b_.CreateZExt(swapped, i64t()), false};
  }
  case BuiltinFn::Nsecs: {
    if (gpu_)
      return {helper(abi::kHelperGpuGlobalTimer, i64t(), {}), false};
    std::string mode =
        A.empty() ? "monotonic" : static_cast<Identifier *>(A[0])->name;
    int h = mode == "boot"                        ? BPF_FUNC_ktime_get_boot_ns
            : (mode == "tai" || mode == "sw_tai") ? BPF_FUNC_ktime_get_tai_ns
                                                  : BPF_FUNC_ktime_get_ns;
    return {helper(h, i64t(), {}), false};
  }
  case BuiltinFn::Pid:
    return gen_builtin(BuiltinVar::Pid, 0, n, c);
  case BuiltinFn::Tid:
    return gen_builtin(BuiltinVar::Tid, 0, n, c);
  case BuiltinFn::Comm:
    return gen_builtin(BuiltinVar::Comm, 0, n, c);
  case BuiltinFn::Signal: {
    // Semantic analysis refused names that are not signals.
    auto *name = dyn_cast<String>(A[0]);
    llvm::Value *v = name ? i64(signal_number(name->value)) : gen_scalar(A[0]);
    helper(BPF_FUNC_send_signal, i64t(), {b_.CreateTrunc(v, b_.getInt32Ty())});
    return {i64(0), false};
  }
  case BuiltinFn::Assert: {
    auto *ok = gen_cond(A[0]);
    auto *bad = block("assert.failed");
    auto *good = block("assert.ok");
    b_.CreateCondBr(ok, good, bad);
    b_.SetInsertPoint(bad);
    runtime::FormatSpec spec = located_format(
        c.loc, "assertion failed: " + static_cast<String *>(A[1])->value);
    uint64_t id = bundle_.printf_formats.size();
    bundle_.printf_formats.push_back(spec);
    gen_simple_event(abi::EventType::Errorf, id);
    gen_simple_event(abi::EventType::Exit, 1);
    gen_return();
    b_.SetInsertPoint(good);
    return {i64(0), false};
  }
  case BuiltinFn::StaticAssert: {
    return {i64(0), false};
  }
  case BuiltinFn::Uaddr: {
    // The symbol's address in the traced process: the backend resolves it
    // at attach time into the globals after abi::Globals.
    if (probe_targets_.size() != 1) {
      fail(c.loc, "uaddr() needs a probe on exactly one binary (this one has " +
                      std::to_string(probe_targets_.size()) + ")");
      return {i64(0), false};
    }
    runtime::UaddrSpec u{*probe_targets_.begin(),
                         static_cast<String *>(A[0])->value};
    size_t index = 0;
    while (index < bundle_.uaddrs.size() &&
           !(bundle_.uaddrs[index].binary == u.binary &&
             bundle_.uaddrs[index].symbol == u.symbol))
      index++;
    if (index == bundle_.uaddrs.size())
      bundle_.uaddrs.push_back(u);
    return {
        globals_field(static_cast<uint32_t>(sizeof(abi::Globals) + 8 * index)),
        false};
  }
  case BuiltinFn::Count:
  case BuiltinFn::Sum:
  case BuiltinFn::Min:
  case BuiltinFn::Max:
  case BuiltinFn::Avg:
  case BuiltinFn::Stats:
  case BuiltinFn::Hist:
  case BuiltinFn::Lhist:
    // Lowered with their map assignment (irgen_maps.cpp); semantic
    // analysis refuses them anywhere else.
    fail(c.loc, "BUG: " + n + "() outside a map assignment");
    return {i64(0), false};
  case BuiltinFn::Override:
  case BuiltinFn::Path:
  case BuiltinFn::CgroupPath:
  case BuiltinFn::Kaddr:
  case BuiltinFn::PercpuKaddr:
  case BuiltinFn::Skboutput:
  case BuiltinFn::SocketCookie:
  case BuiltinFn::KfuncAllowed:
  case BuiltinFn::KfuncExist:
  case BuiltinFn::Unwatch:
  case BuiltinFn::SignalThread:
  case BuiltinFn::WriteUser:
  case BuiltinFn::Fail:
  case BuiltinFn::Tseries:
    // Kernel-side only: semantic analysis refuses them.
  case BuiltinFn::User:
    break;
  }
  fail(c.loc, n + "() is not supported by ubtrace's code generator yet");
  return {i64(0), false};
}

} // namespace ubtrace::codegen
