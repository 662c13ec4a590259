// The loader on real clang-compiled objects: maps from BTF and global data,
// programs linked with their subprograms, canonical map/callback references,
// and a named error for each kind of object it cannot load.
#include "test_runtime.h"

#include <gtest/gtest.h>
#include <set>

namespace ubtrace::vm::test {
namespace {

Object must_load(const std::string &name) {
  auto obj = load_object(read_file(prog_path(name)));
  if (!obj) {
    ADD_FAILURE() << name << ": " << obj.error();
    return {};
  }
  return std::move(*obj);
}

std::string load_error(const std::vector<uint8_t> &bytes) {
  auto obj = load_object(bytes);
  return obj ? "loaded" : obj.error();
}

const MapDef *map_named(const Object &obj, const std::string &name) {
  auto index = obj.find_map(name);
  return index ? &obj.maps[*index] : nullptr;
}

TEST(Loader, MapsFromBtf) {
  Object obj = must_load("maps");
  const MapDef *by_key = map_named(obj, "by_key");
  ASSERT_NE(by_key, nullptr);
  EXPECT_EQ(by_key->type, uint32_t(BPF_MAP_TYPE_HASH));
  EXPECT_EQ(by_key->key_size, 8u);
  EXPECT_EQ(by_key->value_size, 32u);
  EXPECT_EQ(by_key->max_entries, 128u);
  EXPECT_FALSE(by_key->is_global_data);
  const MapDef *buckets = map_named(obj, "buckets");
  ASSERT_NE(buckets, nullptr);
  EXPECT_EQ(buckets->type, uint32_t(BPF_MAP_TYPE_ARRAY));
  EXPECT_EQ(buckets->key_size, 4u);
  EXPECT_EQ(buckets->value_size, 8u);
  EXPECT_EQ(buckets->max_entries, 16u);
  const MapDef *scratch = map_named(obj, "scratch");
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ(scratch->type, uint32_t(BPF_MAP_TYPE_PERCPU_ARRAY));
  EXPECT_EQ(obj.license, "GPL");

  Object strings = must_load("strings");
  const MapDef *events = map_named(strings, "events");
  ASSERT_NE(events, nullptr);
  EXPECT_EQ(events->type, uint32_t(BPF_MAP_TYPE_RINGBUF));
  EXPECT_EQ(events->max_entries, 4096u);
  const MapDef *perf = map_named(strings, "perf");
  ASSERT_NE(perf, nullptr);
  EXPECT_EQ(perf->key_size, 4u);
  EXPECT_EQ(perf->value_size, 4u);
}

TEST(Loader, GlobalDataBecomesArrayMaps) {
  Object obj = must_load("globals");
  const MapDef *rodata = map_named(obj, ".rodata");
  ASSERT_NE(rodata, nullptr);
  EXPECT_TRUE(rodata->is_global_data);
  EXPECT_TRUE(rodata->read_only);
  EXPECT_EQ(rodata->type, uint32_t(BPF_MAP_TYPE_ARRAY));
  EXPECT_EQ(rodata->max_entries, 1u);
  EXPECT_EQ(rodata->initial_value.size(), rodata->value_size);
  const GlobalVar *scale = obj.find_global("scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(obj.maps[scale->map].name, ".rodata");
  uint64_t value = 0;
  memcpy(&value, rodata->initial_value.data() + scale->offset, sizeof(value));
  EXPECT_EQ(value, 7u);

  const GlobalVar *table = obj.find_global("table");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->size, 32u);
  const MapDef &data = obj.maps[table->map];
  EXPECT_EQ(data.name, ".data");
  EXPECT_FALSE(data.read_only);
  uint64_t words[4];
  memcpy(words, data.initial_value.data() + table->offset, sizeof(words));
  EXPECT_EQ(words[3], 40u);

  const GlobalVar *message = obj.find_global("message");
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(obj.maps[message->map].name, ".bss");
  EXPECT_EQ(message->size, 32u);
}

// Every ld_imm64 and call in a linked program is in canonical form.
void expect_linked(const Object &obj, const Program &p) {
  std::set<uint32_t> starts;
  for (const Function &f : p.functions)
    starts.insert(f.start);
  ASSERT_EQ(p.functions.front().start, 0u);
  for (uint32_t pc = 0; pc < p.insns.size(); ++pc) {
    const Insn &in = p.insns[pc];
    if (is_pseudo_call(in))
      EXPECT_TRUE(starts.count(pc + 1 + in.imm)) << p.name << " PC " << pc;
    if (!is_ld_imm64(in))
      continue;
    ASSERT_LT(pc + 1, p.insns.size());
    switch (in.src) {
    case BPF_PSEUDO_MAP_FD:
      EXPECT_LT(uint32_t(in.imm), obj.maps.size());
      EXPECT_EQ(p.insns[pc + 1].imm, 0);
      break;
    case BPF_PSEUDO_MAP_VALUE:
      ASSERT_LT(uint32_t(in.imm), obj.maps.size());
      EXPECT_LT(uint32_t(p.insns[pc + 1].imm), obj.maps[in.imm].value_size);
      break;
    case BPF_PSEUDO_FUNC:
      EXPECT_TRUE(starts.count(pc + 1 + in.imm)) << p.name << " PC " << pc;
      break;
    default:
      EXPECT_EQ(in.src, 0) << p.name << " PC " << pc;
    }
    ++pc;
  }
}

TEST(Loader, ProgramsAreLinkedWithTheirSubprograms) {
  Object obj = must_load("calls");
  ASSERT_EQ(obj.programs.size(), 2u);
  const Program *calls = obj.find_program("calls");
  ASSERT_NE(calls, nullptr);
  EXPECT_EQ(calls->section, "uprobe/calls");
  std::vector<std::string> names;
  for (const Function &f : calls->functions)
    names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"calls", "total", "fill", "mix"}));
  expect_linked(obj, *calls);
  const Program *direct = obj.find_program("uprobe/direct");
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(direct->name, "direct");
  ASSERT_EQ(direct->functions.size(), 2u);
  EXPECT_EQ(direct->functions[1].name, "mix");
  expect_linked(obj, *direct);
  for (const char *name :
       {"maps", "strings", "loops", "callbacks", "globals", "alu", "alu_v4"}) {
    Object o = must_load(name);
    EXPECT_FALSE(o.programs.empty()) << name;
    for (const Program &p : o.programs)
      expect_linked(o, p);
  }
}

TEST(Loader, CallbacksAreResolved) {
  Object obj = must_load("callbacks");
  const Program *looped = obj.find_program("looped");
  ASSERT_NE(looped, nullptr);
  ASSERT_EQ(looped->functions.size(), 2u);
  EXPECT_EQ(looped->functions[1].name, "add_index");
  bool found = false;
  for (uint32_t pc = 0; pc < looped->insns.size(); ++pc)
    if (is_ld_imm64(looped->insns[pc]) &&
        looped->insns[pc].src == BPF_PSEUDO_FUNC) {
      EXPECT_EQ(pc + 1 + looped->insns[pc].imm, looped->functions[1].start);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(Loader, NamesWhatItCannotLoad) {
  EXPECT_EQ(load_error({'h', 'e', 'l', 'l', 'o'}), "not an ELF object");
  EXPECT_EQ(load_error({}), "not an ELF object");
  EXPECT_EQ(load_error(read_file("/proc/self/exe")),
            "not a 64-bit BPF ELF object (e_machine is 62, want EM_BPF)");
  EXPECT_EQ(load_error(read_file(prog_path("maps_nobtf"))),
            "'.maps' needs BTF, but the object has no '.BTF' section (compile "
            "with -g)");
  EXPECT_EQ(load_error(read_file(prog_path("bad_legacy_maps"))),
            "legacy 'maps' section (struct bpf_map_def) is not supported: "
            "declare maps with BTF in '.maps'");
  EXPECT_EQ(load_error(read_file(prog_path("bad_extern"))),
            "instruction 0 of 'uses_kconfig' refers to unresolved extern "
            "'LINUX_KERNEL_VERSION' (externs, kconfig and ksyms are not "
            "supported)");
  // A truncated object fails with a message, never a crash.
  std::vector<uint8_t> bytes = read_file(prog_path("maps"));
  for (size_t cut : {size_t(64), bytes.size() / 2, bytes.size() - 1}) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + cut);
    std::string error = load_error(part);
    EXPECT_NE(error, "loaded") << cut;
    EXPECT_FALSE(error.empty()) << cut;
  }
}

} // namespace
} // namespace ubtrace::vm::test
