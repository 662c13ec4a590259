// The VM's own test programs (tests/unit/vm/progs, compiled there with
// clang -target bpf) in both engines, over the VM's test maps and helpers
// (which cover trace_printk, snprintf, perf and ring buffer output): every
// call's r0, and afterwards every map, record and printed line, must match.
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/vm/test_runtime.h"

#include <gtest/gtest.h>
#include <random>

namespace ubtrace::jit::test {
namespace {

using vm::test::Runtime;

std::string dump(Runtime &rt) {
  std::string out;
  for (const vm::MapDef &def : rt.object().maps) {
    vm::test::TestMap &map = rt.map(def.name);
    out += def.name + ":\n";
    if (auto *hash = dynamic_cast<vm::test::HashMap *>(&map)) {
      for (const auto &[key, value] : hash->entries())
        out += "  " +
               hex_bytes({reinterpret_cast<const uint8_t *>(key.data()),
                          key.size()}) +
               " = " + hex_bytes(value) + "\n";
    } else if (dynamic_cast<vm::test::ArrayMap *>(&map)) {
      for (uint32_t i = 0; i < def.max_entries; ++i)
        out += "  [" + std::to_string(i) + "] = " +
               hex_bytes({static_cast<const uint8_t *>(map.lookup(&i)),
                          def.value_size}) +
               "\n";
    }
    for (const auto &record : map.records)
      out += "  record " + hex_bytes(record) + "\n";
  }
  return out;
}

const char *const kStrings[] = {"hello world", "hello there", "", "help",
                                "a string longer than thirty-two bytes....."};

std::vector<std::vector<uint64_t>> inputs() {
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint64_t>> out;
  for (int i = 0; i < 40; ++i) {
    std::vector<uint64_t> args(8);
    for (uint64_t &a : args)
      a = i < 8 ? uint64_t(i * 3) : rng() >> (rng() % 64);
    if (i % 5 == 4)
      args[0] = reinterpret_cast<uint64_t>(kStrings[(i / 5) % 5]);
    out.push_back(args);
  }
  return out;
}

class VmProgsDiff : public testing::TestWithParam<std::string> {};

TEST_P(VmProgsDiff, SameResultsMapsAndOutput) {
  Runtime interp_rt = Runtime::from_file(GetParam());
  Runtime jit_rt = Runtime::from_file(GetParam());
  const vm::ContextInfo ctx{64};
  std::vector<vm::BoundProgram> bound;
  std::vector<std::shared_ptr<JittedProgram>> compiled;
  std::vector<std::string> names;
  for (const vm::Program &p : interp_rt.object().programs) {
    auto b = interp_rt.prepare(p.name, ctx);
    auto v = jit_rt.verify(p.name, ctx);
    ASSERT_TRUE(b && v) << p.name;
    auto c = engine().compile(*v, jit_rt.bindings(), vm::test::test_helpers());
    ASSERT_TRUE(c) << p.name << ": " << c.error();
    bound.push_back(std::move(*b));
    compiled.push_back(*c);
    names.push_back(p.name);
  }
  ASSERT_FALSE(bound.empty());
  std::vector<std::string> interp_lines, jit_lines;
  for (std::vector<uint64_t> args : inputs())
    for (size_t i = 0; i < bound.size(); ++i) {
      std::vector<uint64_t> a = args, b = args;
      vm::test::printk_lines().clear();
      scrub_stack();
      vm::RunResult r = vm::run(bound[i], a.data());
      ASSERT_EQ(r.status, vm::RunStatus::Ok);
      interp_lines.insert(interp_lines.end(), vm::test::printk_lines().begin(),
                          vm::test::printk_lines().end());
      vm::test::printk_lines().clear();
      scrub_stack();
      uint64_t r0 = compiled[i]->run(b.data());
      jit_lines.insert(jit_lines.end(), vm::test::printk_lines().begin(),
                       vm::test::printk_lines().end());
      ASSERT_EQ(hex_u64(r0), hex_u64(r.r0)) << names[i];
      ASSERT_EQ(a, b) << names[i];
    }
  EXPECT_EQ(jit_lines, interp_lines);
  EXPECT_EQ(dump(jit_rt), dump(interp_rt));
}

INSTANTIATE_TEST_SUITE_P(Progs, VmProgsDiff,
                         testing::Values("alu", "alu_v4", "callbacks", "calls",
                                         "globals", "loops", "maps", "strings",
                                         "tracing"));

} // namespace
} // namespace ubtrace::jit::test
