// Builtin variables, and the dispatch of calls to the lowering of each
// builtin function (irgen_calls_<family>.cpp).
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
  return load_or_zero(g, make_int(8, false), offset);
}

llvm::Value *IRGen::load_or_zero(llvm::Value *p, const Type &t,
                                 uint32_t offset) {
  auto *from = b_.GetInsertBlock();
  auto *has = block("load.has");
  auto *done = block("load.done");
  b_.CreateCondBr(b_.CreateIsNull(p), done, has);
  b_.SetInsertPoint(has);
  auto *v = load_int(byte_ptr(p, offset), t);
  auto *from_has = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(i64t(), 2);
  phi->addIncoming(i64(0), from);
  phi->addIncoming(v, from_has);
  return phi;
}

// argN: the Nth integer argument (registers, then the stack above the
// return address); in usdt probes, the site's decoded Nth argument.
Val IRGen::arg_value(int n, const ast::Location &loc, const std::string &name) {
  auto ctx_load = [&](uint32_t offset) {
    return b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, offset), llvm::Align(8));
  };
  if (gpu_)
    return {ctx_load(abi::kGpuCtxArgs + 8 * n), false};
  if (mixed_usdt_) {
    fail(loc, name + " reads USDT arguments in usdt probes and registers in "
                     "others: split the probe");
    return {i64(0), false};
  }
  if (usdt_) {
    // The agent decoded the site's arguments into the ctx.
    if (n >= static_cast<int>(abi::kUsdtMaxArgs)) {
      fail(loc, "USDT probes have at most " +
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

// An `args` field where the DWARF puts it at the function's entry. In a
// uretprobe, the argument registers as the function was entered with them
// (semantic leaves out the rest): the agent copies the kept registers into
// the ctx for return probes that say they read them (ProbeSpec).
Val IRGen::place_value(const ast::ArgPlace &at, const ast::Location &loc,
                       const std::string &name) {
  using Kind = ast::ArgPlace::Kind;
  if (at.kind == Kind::Constant)
    return {i64(static_cast<uint64_t>(at.value)), false};
  if (at.kind == Kind::Syscall) {
    // The agent filled the slot for the event (ast/syscalls.h).
    if (at.slot >= static_cast<int>(abi::kUsdtMaxArgs)) {
      fail(loc, "args of these system calls has more than " +
                    std::to_string(abi::kUsdtMaxArgs) +
                    " fields together: split the probe");
      return {i64(0), false};
    }
    return {b_.CreateAlignedLoad(
                i64t(), byte_ptr(ctx_, abi::kCtxUsdtArgs + 8 * at.slot),
                llvm::Align(8)),
            false};
  }
  auto load = [&](uint32_t offset) -> Val {
    return {
        b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, offset), llvm::Align(8)),
        false};
  };
  if (at_return_) {
    reads_entry_args_ = true;
    return load(abi::kCtxEntryArgs + 8 * at.slot);
  }
  if (at.kind == Kind::Register)
    return load(at.regs_offset);
  return arg_value(at.slot, loc, name);
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
  case BuiltinVar::Ppid:
    return {helper(abi::kHelperPpid, i64t(), {}), false};
  case BuiltinVar::Ctx: {
    return {b_.CreatePtrToInt(ctx_, i64t()), false};
  }
  case BuiltinVar::Comm: {
    auto *buf = entry_alloca(16, "comm");
    zero(buf, 16);
    helper(BPF_FUNC_get_current_comm, i64t(), {buf, i64(16)});
    return {buf, true};
  }
  case BuiltinVar::Pcomm:
  case BuiltinVar::LeaderComm: {
    auto *buf = entry_alloca(16, "comm");
    zero(buf, 16);
    auto which =
        var == BuiltinVar::Pcomm ? abi::kRelatedParent : abi::kRelatedLeader;
    helper(abi::kHelperRelatedComm, i64t(), {buf, i64(16), i64(which)});
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
    // A return type from DWARF narrower than rax: only its bits count.
    llvm::Value *rax = ctx_load(abi::kRax);
    const auto *ident = ast::dyn_cast<Identifier>(&e);
    if (ident && ident->retval_size > 0 && ident->retval_size < 8) {
      auto *narrow = b_.CreateTrunc(rax, b_.getIntNTy(8 * ident->retval_size));
      rax = ident->retval_signed ? b_.CreateSExt(narrow, i64t())
                                 : b_.CreateZExt(narrow, i64t());
    }
    return {rax, false};
  }
  case BuiltinVar::Args: {
    // The record of the function's parameters (ast/debug_types.h), each
    // read from its slot as argN reads it.
    Type t = e.type;
    auto *slot = entry_alloca(std::max<uint32_t>(t.size, 1), "args");
    zero(slot, t.size);
    const auto *ident = ast::dyn_cast<Identifier>(&e);
    size_t n = ident ? ident->arg_places.size() : 0;
    for (size_t i = 0; i < t.fields.size() && i < n; i++) {
      const auto &f = t.fields[i];
      if (ident->arg_places[i].kind == ast::ArgPlace::Kind::SyscallArgs) {
        // x86-64 passes a system call's arguments in these registers.
        static constexpr uint32_t kSyscallRegs[6] = {
            abi::kRdi, abi::kRsi, abi::kRdx, abi::kR10, abi::kR8, abi::kR9};
        for (int k = 0; k < 6; k++)
          b_.CreateAlignedStore(
              b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, kSyscallRegs[k]),
                                   llvm::Align(8)),
              byte_ptr(slot, f.offset + 8 * k), llvm::Align(8));
        continue;
      }
      Val v = place_value(ident->arg_places[i], e.loc, name);
      store_value(byte_ptr(slot, f.offset), *f.type, v, ast::make_int(8, true));
    }
    return {slot, true};
  }
  case BuiltinVar::Arg:
    return arg_value(index, e.loc, name);
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
  case BuiltinVar::Probetype:
  case BuiltinVar::BuiltinArch:
    if (auto *id = ast::dyn_cast<ast::Identifier>(&e))
      return gen_string_literal(id->const_text, e.type.size);
    break;
  }
  fail(e.loc,
       "the builtin " + name + " is not supported by ubtrace's code generator");
  return {i64(0), false};
}

Val IRGen::gen_call(Call &c) {
  const std::string &n = c.name;
  switch (c.fn) {
  case BuiltinFn::Printf:
  case BuiltinFn::Debugf:
    return gen_printf(c);
  case BuiltinFn::Errorf:
  case BuiltinFn::Warnf:
    return gen_errorf(c);
  case BuiltinFn::System:
    return gen_system(c);
  case BuiltinFn::Cat:
    return gen_cat(c);
  case BuiltinFn::Print:
    return gen_print(c);
  case BuiltinFn::Join:
    return gen_join(c);
  case BuiltinFn::Clear:
  case BuiltinFn::Zero:
    return gen_clear_zero(c);
  case BuiltinFn::Exit:
    return gen_exit(c);
  case BuiltinFn::Time:
    return gen_time(c);
  case BuiltinFn::Strftime:
    return gen_strftime(c);
  case BuiltinFn::Delete:
  case BuiltinFn::HasKey:
    return gen_delete_has_key(c);
  case BuiltinFn::Len:
    return gen_len(c);
  case BuiltinFn::Str:
    return gen_str(c);
  case BuiltinFn::Buf:
    return gen_buf(c);
  case BuiltinFn::Ustack:
  case BuiltinFn::DwUstack: // ustack walks with CFI already
    return gen_builtin(BuiltinVar::Ustack, 0, n, c);
  case BuiltinFn::Kstack:
    return gen_builtin(BuiltinVar::Kstack, 0, n, c);
  case BuiltinFn::Usym:
    return gen_usym(c);
  case BuiltinFn::Ksym:
  case BuiltinFn::Kptr:
  case BuiltinFn::Uptr:
  case BuiltinFn::Strerror:
  case BuiltinFn::SignalName:
  case BuiltinFn::SyscallName:
    return gen_passthrough(c);
  case BuiltinFn::Reg:
    return gen_reg(c);
  case BuiltinFn::Ntop:
    return gen_ntop(c);
  case BuiltinFn::Pton:
    return gen_pton(c);
  case BuiltinFn::Macaddr:
    return gen_macaddr(c);
  case BuiltinFn::Cgroupid:
    return gen_cgroupid(c);
  case BuiltinFn::Strncmp:
    return gen_strncmp(c);
  case BuiltinFn::Strlen:
    return gen_strlen(c);
  case BuiltinFn::Strcontains:
    return gen_strcontains(c);
  case BuiltinFn::Bswap:
    return gen_bswap(c);
  case BuiltinFn::Nsecs:
    return gen_nsecs(c);
  case BuiltinFn::Pid:
  case BuiltinFn::Tid: {
    // pid(init), tid(init): the initial namespace's numbers; pid and
    // pid(curr_ns) the CLI's (runtime/helpers/pid_view.h). A GPU thread
    // has the host process's.
    const auto *ns =
        c.args.empty() ? nullptr : ast::dyn_cast<Identifier>(c.args[0]);
    if (ns && ns->name == "init" && !gpu_) {
      auto *v = helper(abi::kHelperInitialPidTgid, i64t(), {});
      return {c.fn == BuiltinFn::Pid ? b_.CreateLShr(v, i64(32))
                                     : b_.CreateAnd(v, i64(0xffffffff)),
              false};
    }
    return gen_builtin(
        c.fn == BuiltinFn::Pid ? BuiltinVar::Pid : BuiltinVar::Tid, 0, n, c);
  }
  case BuiltinFn::Comm:
    return gen_builtin(BuiltinVar::Comm, 0, n, c);
  case BuiltinFn::Pcomm:
    return gen_builtin(BuiltinVar::Pcomm, 0, n, c);
  case BuiltinFn::LeaderComm:
    return gen_builtin(BuiltinVar::LeaderComm, 0, n, c);
  case BuiltinFn::Signal:
    return gen_signal(c);
  case BuiltinFn::WriteUser:
    return gen_write_user(c);
  case BuiltinFn::Assert:
    return gen_assert(c);
  case BuiltinFn::StaticAssert:
    return gen_static_assert(c);
  case BuiltinFn::Uaddr:
    return gen_uaddr(c);
  case BuiltinFn::Count:
  case BuiltinFn::Sum:
  case BuiltinFn::Min:
  case BuiltinFn::Max:
  case BuiltinFn::Avg:
  case BuiltinFn::Stats:
  case BuiltinFn::Hist:
  case BuiltinFn::Lhist:
  case BuiltinFn::Tseries:
    // Lowered with their map assignment (irgen_maps.cpp); semantic
    // analysis refuses them anywhere else.
    fail(c.loc, "BUG: " + n + "() outside a map assignment");
    return {i64(0), false};
    // bpftrace's kernel-side functions (UBT_BUILTIN_KERNEL_FN rows)
#define UBT_BUILTIN_FN(id, name, min, max, probes, flags)
#define UBT_BUILTIN_KERNEL_FN(id, name, min, max) case BuiltinFn::id:
#include "ast/builtins.def"
#undef UBT_BUILTIN_KERNEL_FN
#undef UBT_BUILTIN_FN
    // Kernel-side only: semantic analysis refuses them.
  case BuiltinFn::User:
    break;
  }
  fail(c.loc, n + "() is not supported by ubtrace's code generator yet");
  return {i64(0), false};
}

} // namespace ubtrace::codegen
