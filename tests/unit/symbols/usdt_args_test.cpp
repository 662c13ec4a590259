#include "runtime/symbols/elf_symbols.h"
#include "runtime/symbols/usdt_args.h"
#include "runtime/symbols/usdt_eval.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace ubtrace::runtime::symbols;

namespace {

UsdtArg parse(const std::string &spec) {
  auto arg = parse_usdt_arg(spec);
  EXPECT_TRUE(arg) << spec << ": " << (arg ? "" : arg.error());
  return arg ? *arg : UsdtArg{};
}

} // namespace

TEST(UsdtArgs, Registers) {
  UsdtArg a = parse("-4@%edi");
  EXPECT_EQ(a.kind, UsdtArg::Kind::Register);
  EXPECT_EQ(a.size, 4);
  EXPECT_TRUE(a.is_signed);
  EXPECT_EQ(a.reg.reg, X86Register::Rdi);
  EXPECT_EQ(a.reg.width, 4);
  EXPECT_EQ(pt_regs_offset(a.reg.reg), 112u); // arg0 in BPF's pt_regs

  UsdtArg b = parse("8@%rax");
  EXPECT_EQ(b.reg.reg, X86Register::Rax);
  EXPECT_FALSE(b.is_signed);
  EXPECT_EQ(pt_regs_offset(b.reg.reg), 80u);
  EXPECT_EQ(parse("1@%r8b").reg, (RegisterOperand{X86Register::R8, 1, false}));
  EXPECT_EQ(parse("1@%ah").reg, (RegisterOperand{X86Register::Rax, 1, true}));
  EXPECT_EQ(parse("2@%si").reg, (RegisterOperand{X86Register::Rsi, 2, false}));
  EXPECT_EQ(parse("-8@%r15").reg.reg, X86Register::R15);
  EXPECT_EQ(pt_regs_offset(X86Register::R15), 0u);
  EXPECT_EQ(pt_regs_offset(X86Register::Rsp), 152u);
}

TEST(UsdtArgs, Memory) {
  UsdtArg a = parse("8@-16(%rbp)");
  EXPECT_EQ(a.kind, UsdtArg::Kind::Memory);
  EXPECT_TRUE(a.has_base);
  EXPECT_EQ(a.reg.reg, X86Register::Rbp);
  EXPECT_EQ(a.displacement, -16);
  EXPECT_FALSE(a.index);

  UsdtArg b = parse("-4@(%rsp)");
  EXPECT_EQ(b.displacement, 0);
  EXPECT_EQ(b.reg.reg, X86Register::Rsp);

  UsdtArg c = parse("4@8(%rax,%rbx,4)");
  EXPECT_EQ(c.reg.reg, X86Register::Rax);
  ASSERT_TRUE(c.index);
  EXPECT_EQ(c.index->reg, X86Register::Rbx);
  EXPECT_EQ(c.scale, 4);
  EXPECT_EQ(c.displacement, 8);

  UsdtArg d = parse("8@(,%rcx,8)");
  EXPECT_FALSE(d.has_base);
  EXPECT_EQ(d.index->reg, X86Register::Rcx);
  EXPECT_EQ(d.scale, 8);

  UsdtArg e = parse("-4@global_counter(%rip)");
  EXPECT_EQ(e.symbol, "global_counter");
  EXPECT_EQ(e.reg.reg, X86Register::Rip);
  UsdtArg f = parse("8@counter.0+8(%rip)");
  EXPECT_EQ(f.symbol, "counter.0");
  EXPECT_EQ(f.displacement, 8);
  UsdtArg g = parse("8@0x10(%rdx)");
  EXPECT_EQ(g.displacement, 16);
}

TEST(UsdtArgs, ConstantsAndFloats) {
  UsdtArg a = parse("4@$5");
  EXPECT_EQ(a.kind, UsdtArg::Kind::Constant);
  EXPECT_EQ(a.constant, 5);
  EXPECT_EQ(parse("-4@$-7").constant, -7);
  UsdtArg f = parse("8f@-96(%rbp)");
  EXPECT_TRUE(f.is_float);
  EXPECT_EQ(f.size, 8);
  EXPECT_EQ(f.kind, UsdtArg::Kind::Memory);
  // A vector register is not in pt_regs: parsed, but unavailable.
  UsdtArg x = parse("8f@%xmm0");
  EXPECT_EQ(x.kind, UsdtArg::Kind::Unavailable);
  EXPECT_NE(x.error.find("%xmm0"), std::string::npos);
}

TEST(UsdtArgs, WholeStrings) {
  auto args = parse_usdt_args("-4@%edi 8@-16(%rbp)  8@%rax 4@$5 "
                              "-4@8(%rax,%rbx,4)");
  ASSERT_TRUE(args) << args.error();
  ASSERT_EQ(args->size(), 5u);
  EXPECT_EQ((*args)[4].text, "-4@8(%rax,%rbx,4)");
  EXPECT_TRUE(parse_usdt_args("")->empty());
}

TEST(UsdtArgs, Rejects) {
  for (const char *bad : {"3@%eax", "4@%foo", "x@%eax", "4@8(%rax", "4@",
                          "4@8(%rax,%rbx,3)", "4@8(%rax,%rbx,4,1)"}) {
    EXPECT_FALSE(parse_usdt_arg(bad)) << bad;
  }
}

TEST(UsdtArgs, SymbolsBecomeRipRelative) {
  auto table = SymbolTable::from_symbols({
      {.name = "global_counter",
       .vaddr = 0x4010,
       .size = 4,
       .type = SymbolType::Object,
       .binding = SymbolBinding::Global},
  });
  auto args = parse_usdt_args("-4@global_counter+4(%rip) 8@.LC0(%rip) "
                              "4@global_counter 4@0x4010");
  ASSERT_TRUE(args);
  auto pie = *args;
  resolve_usdt_arg_symbols(pie, 0x1200, false, &table);
  EXPECT_EQ(pie[0].kind, UsdtArg::Kind::Memory);
  EXPECT_EQ(pie[0].reg.reg, X86Register::Rip);
  EXPECT_EQ(pie[0].displacement, 0x4010 + 4 - 0x1200);
  EXPECT_TRUE(pie[0].symbol_resolved);
  EXPECT_EQ(pie[1].kind, UsdtArg::Kind::Unavailable); // an assembler label
  EXPECT_EQ(pie[2].kind, UsdtArg::Kind::Unavailable); // absolute in a PIE
  EXPECT_EQ(pie[3].kind, UsdtArg::Kind::Unavailable);

  auto exec = *args;
  resolve_usdt_arg_symbols(exec, 0x401200, true, &table);
  EXPECT_EQ(exec[2].kind, UsdtArg::Kind::Memory);
  EXPECT_EQ(exec[2].displacement, 0x4010 - 0x401200);
  EXPECT_EQ(exec[3].kind, UsdtArg::Kind::Memory); // absolute, non-PIE
  EXPECT_FALSE(exec[3].has_base);
  EXPECT_EQ(exec[3].displacement, 0x4010);
}

TEST(UsdtArgs, Evaluation) {
  uint64_t regs[21] = {};
  regs[pt_regs_offset(X86Register::Rdi) / 8] = 0xffffffff80000001ull;
  regs[pt_regs_offset(X86Register::Rax) / 8] = 0x1234;
  regs[pt_regs_offset(X86Register::Rbp) / 8] = 0x1000;
  regs[pt_regs_offset(X86Register::Rbx) / 8] = 2;
  // 64 bytes of memory at 0xff0 (rbp - 16), holding -5 at its start.
  uint8_t memory[64] = {};
  int32_t minus_five = -5;
  std::memcpy(memory, &minus_five, 4);
  UsdtArgSource src;
  src.pt_regs = regs;
  src.read_memory = [&](uint64_t addr, void *out, size_t size) {
    if (addr < 0xff0 || addr + size > 0xff0 + sizeof(memory))
      return false;
    std::memcpy(out, memory + (addr - 0xff0), size);
    return true;
  };
  auto value = [&](const std::string &spec) {
    auto v = read_usdt_arg(parse(spec), src);
    EXPECT_TRUE(v) << spec;
    return v ? static_cast<int64_t>(*v) : 0;
  };
  EXPECT_EQ(value("-4@%edi"), static_cast<int32_t>(0x80000001));
  EXPECT_EQ(value("4@%edi"), 0x80000001);
  EXPECT_EQ(value("8@%rdi"), static_cast<int64_t>(0xffffffff80000001ull));
  EXPECT_EQ(value("1@%ah"), 0x12);
  EXPECT_EQ(value("-4@-16(%rbp)"), -5);
  EXPECT_EQ(value("4@-16(%rbp)"), 0xfffffffb);
  EXPECT_EQ(value("-4@-32(%rbp,%rbx,8)"), -5);
  EXPECT_EQ(value("-4@(%rbp)"), 0);
  EXPECT_EQ(value("1@$-56"), 200); // unsigned char 200, written signed
  EXPECT_EQ(value("-2@$-3"), -3);
  EXPECT_FALSE(read_usdt_arg(parse("-4@0(%rax,%rbx,8)"), src)); // unmapped
  EXPECT_FALSE(read_usdt_arg(parse("8@%xmm0"), src));
}
