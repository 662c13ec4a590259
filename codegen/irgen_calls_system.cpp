// Lowering of stacks and symbols, registers, addresses, network values,
// process identity, time, signals, exit and assertions.
#include "ast/builtins.h"
#include "ast/signals.h"
#include "codegen/irgen.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <linux/bpf.h>
#include <map>
#include <sys/stat.h>

namespace ubtrace::codegen {

using namespace ast;

Val IRGen::gen_exit(Call &c) {
  auto &A = c.args;
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

Val IRGen::gen_usym(Call &c) {
  auto &A = c.args;
  auto *buf = entry_alloca(16, "usym");
  b_.CreateAlignedStore(gen_scalar(A[0]), buf, llvm::Align(8));
  auto *pid =
      b_.CreateLShr(helper(BPF_FUNC_get_current_pid_tgid, i64t(), {}), i64(32));
  b_.CreateAlignedStore(pid, byte_ptr(buf, 8), llvm::Align(8));
  return {buf, true};
}

Val IRGen::gen_passthrough(Call &c) {
  auto &A = c.args;
  return {gen_scalar(A[0]), false};
}

Val IRGen::gen_reg(Call &c) {
  auto &A = c.args;
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
  return {
      b_.CreateAlignedLoad(i64t(), byte_ptr(ctx_, it->second), llvm::Align(8)),
      false};
}

Val IRGen::gen_ntop(Call &c) {
  auto &A = c.args;
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

Val IRGen::gen_pton(Call &c) {
  auto &A = c.args;
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

Val IRGen::gen_macaddr(Call &c) {
  auto &A = c.args;
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

Val IRGen::gen_cgroupid(Call &c) {
  auto &A = c.args;
  struct stat st{};
  const std::string &path = static_cast<String *>(A[0])->value;
  if (stat(path.c_str(), &st) != 0) {
    fail(c.loc,
         "cgroupid(): cannot stat " + path + ": " + std::strerror(errno));
    return {i64(0), false};
  }
  return {i64(st.st_ino), false};
}

Val IRGen::gen_bswap(Call &c) {
  auto &A = c.args;
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

Val IRGen::gen_nsecs(Call &c) {
  auto &A = c.args;
  if (gpu_)
    return {helper(abi::kHelperGpuGlobalTimer, i64t(), {}), false};
  std::string mode =
      A.empty() ? "monotonic" : static_cast<Identifier *>(A[0])->name;
  int h = mode == "boot"                        ? BPF_FUNC_ktime_get_boot_ns
          : (mode == "tai" || mode == "sw_tai") ? BPF_FUNC_ktime_get_tai_ns
                                                : BPF_FUNC_ktime_get_ns;
  return {helper(h, i64t(), {}), false};
}

Val IRGen::gen_signal(Call &c) {
  auto &A = c.args;
  // Semantic analysis refused names that are not signals.
  auto *name = dyn_cast<String>(A[0]);
  llvm::Value *v = name ? i64(signal_number(name->value)) : gen_scalar(A[0]);
  helper(BPF_FUNC_send_signal, i64t(), {b_.CreateTrunc(v, b_.getInt32Ty())});
  return {i64(0), false};
}

// The value's bytes written at dst: no more than the value holds (buf()'s
// bytes after its length word), true when all were.
Val IRGen::gen_write_user(Call &c) {
  auto &A = c.args;
  Type st = A[1]->type;
  auto *dst = b_.CreateIntToPtr(gen_scalar(A[0]), ptrt());
  llvm::Value *src = to_mem(gen(A[1]), st);
  uint32_t size = st.size;
  if (st.kind == TypeKind::Buffer) {
    src = byte_ptr(src, 4);
    size -= 4;
  }
  auto *len = gen_scalar(A[2]);
  len = b_.CreateSelect(b_.CreateICmpULT(len, i64(size)), len, i64(size));
  auto *rc = helper(BPF_FUNC_probe_write_user, i64t(), {dst, src, len});
  return {b_.CreateZExt(b_.CreateICmpEQ(rc, i64(0)), i64t()), false};
}

Val IRGen::gen_assert(Call &c) {
  auto &A = c.args;
  auto *ok = gen_cond(A[0]);
  auto *bad = block("assert.failed");
  auto *good = block("assert.ok");
  b_.CreateCondBr(ok, good, bad);
  b_.SetInsertPoint(bad);
  runtime::FormatSpec spec = located_format(
      c.loc, "assert failed: " + static_cast<String *>(A[1])->value);
  uint64_t id = bundle_.printf_formats.size();
  bundle_.printf_formats.push_back(spec);
  gen_simple_event(abi::EventType::Errorf, id);
  gen_simple_event(abi::EventType::Exit, 1);
  gen_return();
  b_.SetInsertPoint(good);
  return {i64(0), false};
}

Val IRGen::gen_static_assert(Call &c) {
  return {i64(0), false};
}

Val IRGen::gen_uaddr(Call &c) {
  auto &A = c.args;
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

} // namespace ubtrace::codegen
