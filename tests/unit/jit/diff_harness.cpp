#include "tests/unit/jit/diff_harness.h"

#include <cstdio>
#include <cstdlib>

namespace ubtrace::jit::test {

JitEngine &engine() {
  static JitEngine *shared = [] {
    auto created = JitEngine::create();
    if (!created) {
      std::fprintf(stderr, "cannot create the JIT: %s\n",
                   created.error().c_str());
      std::abort();
    }
    return created->release();
  }();
  return *shared;
}

Result<Outcome> interpret(const vm::VerifiedProgram &program,
                          std::span<const vm::MapBinding> maps,
                          const vm::HelperImpls &helpers,
                          std::vector<uint8_t> ctx) {
  auto bound = vm::bind_program(program, maps, helpers);
  if (!bound)
    return make_error("bind: " + bound.error());
  vm::RunResult r = vm::run(*bound, ctx.data());
  if (r.status != vm::RunStatus::Ok)
    return make_error(std::string("interpreter: ") + vm::describe(r.status) +
                      " at PC " + std::to_string(r.stop_pc));
  return Outcome{r.r0, std::move(ctx)};
}

Result<Outcome> jit_run(const vm::VerifiedProgram &program,
                        std::span<const vm::MapBinding> maps,
                        const vm::HelperImpls &helpers,
                        std::vector<uint8_t> ctx) {
  auto compiled = engine().compile(program, maps, helpers);
  if (!compiled)
    return make_error("jit: " + compiled.error());
  uint64_t r0 = (*compiled)->run(ctx.data());
  return Outcome{r0, std::move(ctx)};
}

[[gnu::noinline]] void scrub_stack() {
  volatile uint8_t area[64 * 1024];
  for (size_t i = 0; i < sizeof(area); ++i)
    area[i] = 0xa5;
  asm volatile("" ::: "memory");
}

std::string hex_u64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
  return buf;
}

std::string listing(std::span<const vm::Insn> insns) {
  std::string out;
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    out += std::to_string(pc) + ": " +
           vm::disassemble(insns.data(), insns.size(), pc) + "\n";
    if (vm::is_ld_imm64(insns[pc]))
      ++pc;
  }
  return out;
}

std::string diff_plain(std::span<const vm::Insn> insns,
                       const std::vector<std::vector<uint8_t>> &ctxs,
                       bool ctx_writable, const vm::HelperTable &protos,
                       const vm::HelperImpls &helpers) {
  vm::Program program;
  program.name = "prog";
  program.insns.assign(insns.begin(), insns.end());
  vm::ContextInfo info{uint32_t(ctxs.at(0).size()), ctx_writable, false};
  auto verified = vm::verify(program, {}, protos, info);
  if (!verified)
    return "verifier: " + verified.error() + "\n" + listing(insns);
  auto bound = vm::bind_program(*verified, {}, helpers);
  if (!bound)
    return "bind: " + bound.error() + "\n" + listing(insns);
  auto compiled = engine().compile(*verified, {}, helpers);
  if (!compiled)
    return "jit: " + compiled.error() + "\n" + listing(insns);
  for (const std::vector<uint8_t> &ctx : ctxs) {
    std::vector<uint8_t> a = ctx, b = ctx;
    vm::RunResult r = vm::run(*bound, a.data());
    if (r.status != vm::RunStatus::Ok)
      return std::string("interpreter: ") + vm::describe(r.status) + "\n" +
             listing(insns);
    uint64_t r0 = (*compiled)->run(b.data());
    std::string diff;
    if (r.r0 != r0)
      diff +=
          "r0: interpreter " + hex_u64(r.r0) + ", jit " + hex_u64(r0) + "\n";
    for (size_t i = 0; i < ctx.size(); ++i)
      if (a[i] != b[i])
        diff += "ctx[" + std::to_string(i) + "]: interpreter " +
                std::to_string(a[i]) + ", jit " + std::to_string(b[i]) + "\n";
    if (!diff.empty())
      return diff + "on ctx " + hex_bytes(ctx) + "\n" + listing(insns);
  }
  return "";
}

std::string hex_bytes(std::span<const uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

} // namespace ubtrace::jit::test
