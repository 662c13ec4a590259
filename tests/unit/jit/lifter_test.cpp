// The lifter's shape and its refusals: one LLVM function per BPF function
// (program, subprograms, callbacks) plus an adapter per for_each callback,
// named after the entry; errors that name the PC; and the same results with
// full 512-byte frames as with the verifier's depths.
#include "runtime/jit/helper_lowering.h"
#include "runtime/jit/lifter.h"
#include "runtime/vm/asm.h"
#include "runtime/vm/loader.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace ubtrace::jit::test {
namespace {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

vm::VerifiedProgram verified(const vm::Object &object, const char *name) {
  const vm::Program *p = object.find_program(name);
  EXPECT_NE(p, nullptr) << name;
  auto v =
      vm::verify(*p, object.maps, vm::standard_helpers(), vm::ContextInfo{64});
  EXPECT_TRUE(v) << v.error();
  return v ? std::move(*v) : vm::VerifiedProgram{};
}

TEST(Lifter, OneFunctionPerBpfFunctionAndAnAdapterPerForEachCallback) {
  auto object = vm::load_object(
      read_file(std::string(UBT_JIT_PROGS_DIR) + "/callbacks_deep_v3.o"));
  ASSERT_TRUE(object) << object.error();
  auto maps = RegionMaps::for_object(*object);
  ASSERT_TRUE(maps);
  std::vector<MapConstants> constants = map_constants(maps->bindings());
  SymbolHelpers helpers;
  for (const char *name : {"nested", "each"}) {
    vm::VerifiedProgram v = verified(*object, name);
    llvm::LLVMContext ctx;
    llvm::Module module("m", ctx);
    auto entry = lift_program(module, v, constants, helpers, "E");
    ASSERT_TRUE(entry) << entry.error();
    size_t callbacks = 0;
    for (const vm::SubprogInfo &s : v.subprogs) {
      callbacks += s.is_callback;
      if (s.start == 0)
        continue;
      llvm::Function *fn = module.getFunction("E.fn" + std::to_string(s.start));
      ASSERT_NE(fn, nullptr) << "subprogram at " << s.start;
      EXPECT_TRUE(fn->hasInternalLinkage());
      EXPECT_EQ(fn->arg_size(), 5u);
    }
    EXPECT_GT(callbacks, 0u) << name;
    size_t adapters = 0, defined = 0;
    for (llvm::Function &fn : module) {
      adapters += fn.getName().starts_with("E.each");
      defined += !fn.isDeclaration();
    }
    // each: two for_each callbacks, each with its adapter.
    EXPECT_EQ(adapters, std::string(name) == "each" ? 2u : 0u);
    EXPECT_EQ(defined, v.subprogs.size() + adapters);
    EXPECT_EQ((*entry)->getName(), "E");
    EXPECT_EQ((*entry)->arg_size(), 1u);
    // A second program under the same entry name is refused.
    auto again = lift_program(module, v, constants, helpers, "E");
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().find("already has"), std::string::npos);
  }
}

TEST(Lifter, ErrorsNameThePc) {
  // A helper the in-process strategy has no address for.
  std::vector<vm::Insn> prog = {
      VM_MOV64_IMM(0, 0), VM_CALL_HELPER(BPF_FUNC_ktime_get_ns), VM_EXIT()};
  vm::Program p{"p", "p", prog, {}};
  auto v = vm::verify(p, {}, vm::standard_helpers(), vm::ContextInfo{8});
  ASSERT_TRUE(v) << v.error();
  auto compiled = engine().compile(*v, {}, vm::HelperImpls{});
  ASSERT_FALSE(compiled);
  EXPECT_NE(compiled.error().find("PC 1: helper " +
                                  std::to_string(BPF_FUNC_ktime_get_ns) +
                                  " has no implementation"),
            std::string::npos)
      << compiled.error();

  // A direct map value reference to a map without a value address.
  vm::MapDef array;
  array.name = "a";
  array.type = BPF_MAP_TYPE_ARRAY;
  array.key_size = 4;
  array.value_size = 8;
  array.max_entries = 1;
  std::vector<vm::Insn> value_prog = {VM_LD_MAP_VALUE(1, 0, 0),
                                      VM_LDX_MEM(BPF_DW, 0, 1, 0), VM_EXIT()};
  vm::Program vp{"v", "v", value_prog, {}};
  auto vv = vm::verify(vp, std::span(&array, 1), vm::standard_helpers(),
                       vm::ContextInfo{8});
  ASSERT_TRUE(vv) << vv.error();
  vm::MapBinding no_value{0x1000, nullptr, nullptr};
  auto c2 = engine().compile(*vv, std::span(&no_value, 1), vm::HelperImpls{});
  ASSERT_FALSE(c2);
  EXPECT_NE(c2.error().find("PC 0: map 0 has no direct value address"),
            std::string::npos)
      << c2.error();
}

TEST(Lifter, FullFramesComputeTheSame) {
  auto object = vm::load_object(
      read_file(std::string(UBT_JIT_PROGS_DIR) + "/control_flow_v4.o"));
  ASSERT_TRUE(object) << object.error();
  auto maps = RegionMaps::for_object(*object);
  ASSERT_TRUE(maps);
  JitOptions options;
  options.lift.full_stack_frames = true;
  auto full = JitEngine::create(options);
  ASSERT_TRUE(full) << full.error();
  for (const char *name : {"dispatch", "buffers"}) {
    vm::VerifiedProgram v = verified(*object, name);
    auto a = engine().compile(v, maps->bindings(), region_helpers());
    auto b = (*full)->compile(v, maps->bindings(), region_helpers());
    ASSERT_TRUE(a && b);
    for (uint64_t x : {0ull, 1ull, 77ull, ~0ull, 0x123456789ull}) {
      uint64_t args[8] = {x, x * 3, x ^ 5, 7, 8, 9, 10, 11};
      EXPECT_EQ((*a)->run(args), (*b)->run(args)) << name << " " << x;
    }
  }
}

} // namespace
} // namespace ubtrace::jit::test
