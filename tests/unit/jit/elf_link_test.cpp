// The remote-image linker on objects clang compiles from C
// (link_inputs/*.c), which need more of it than lifted programs do: every
// relocation type it supports (PLT32 calls, REX_GOTPCRELX data and function
// addresses, PC32 jump tables and strings, R_X86_64_64 pointer tables, 32
// and 32S absolute addresses), .eh_frame left out. The same C is compiled
// into this test binary, so the linked image must compute what it computes.
#include "runtime/jit/elf_link.h"
#include "tests/unit/jit/diff_harness.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <set>
#include <sys/mman.h>

extern "C" {
long link_ext_add(long a, long b) { // wrapping, as the inputs' -fwrapv
  return static_cast<long>(static_cast<unsigned long>(a) * 7 +
                           static_cast<unsigned long>(b));
}
extern const long link_ext_value;
const long link_ext_value = 1234;
long link_ext_apply(long (*f)(long, long), long a, long b) {
  return f(a, b) ^ 0x5a;
}
// The same functions, compiled into this binary.
long pic_calls(long);
long pic_callback(long);
long pic_switch(long);
long pic_strings(long);
long pic_vectors(long);
long static_table(long);
long static_address_of(long);
}

namespace ubtrace::jit::test {
namespace {

using Fn = long (*)(long);

std::vector<uint8_t> read_object(const std::string &name) {
  std::ifstream in(std::string(UBT_JIT_LINK_INPUTS_DIR) + "/" + name,
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

elf::Symbols test_symbols() {
  return {{"link_ext_add", reinterpret_cast<uint64_t>(&link_ext_add)},
          {"link_ext_value", reinterpret_cast<uint64_t>(&link_ext_value)},
          {"link_ext_apply", reinterpret_cast<uint64_t>(&link_ext_apply)}};
}

// Links `object` for the first free address from `candidates`, maps it
// there RX, and returns the base (or nullptr).
struct Linked {
  void *base = nullptr;
  uint64_t size = 0;
  elf::Relocatable object;
  elf::Plan plan;
  ~Linked() {
    if (base)
      munmap(base, size);
  }
  Fn fn(const std::string &name) const {
    uint64_t off = elf::symbol_offset(object, plan, name);
    EXPECT_NE(off, elf::kNotPlaced) << name;
    return reinterpret_cast<Fn>(static_cast<uint8_t *>(base) + off);
  }
};

void link_at(Linked &out, const std::vector<uint8_t> &bytes,
             std::initializer_list<uint64_t> candidates) {
  auto object = elf::parse(bytes);
  ASSERT_TRUE(object) << object.error();
  auto plan = elf::plan(*object);
  ASSERT_TRUE(plan) << plan.error();
  out.object = std::move(*object);
  out.plan = *plan;
  out.size = (plan->size + 4095) & ~uint64_t(4095);
  for (uint64_t at : candidates) {
    void *p =
        mmap(reinterpret_cast<void *>(at), out.size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
      continue;
    if (p != reinterpret_cast<void *>(at)) {
      munmap(p, out.size);
      continue;
    }
    out.base = p;
    break;
  }
  ASSERT_NE(out.base, nullptr) << "no free address";
  auto image = elf::link(out.object, out.plan,
                         reinterpret_cast<uint64_t>(out.base), test_symbols());
  ASSERT_TRUE(image) << image.error();
  std::memcpy(out.base, image->data(), image->size());
  ASSERT_EQ(mprotect(out.base, out.size, PROT_READ | PROT_EXEC), 0);
}

std::set<uint32_t> reloc_types(const elf::Relocatable &o) {
  std::set<uint32_t> types;
  for (const elf::Reloc &r : o.relocs)
    types.insert(r.type);
  return types;
}

const long kInputs[] = {0,  1,  2,  3,   7,    8,         9,
                        15, 16, -1, -77, 1000, 123456789, 0x7fffffffffffffff};

TEST(ElfLink, PositionIndependentObjectFarFromItsSymbols) {
  Linked linked;
  link_at(linked, read_object("reloc_pic.o"),
          {0x300000000000, 0x310000000000, 0x320000000000});
  auto types = reloc_types(linked.object);
  EXPECT_TRUE(types.count(R_X86_64_PLT32));
  EXPECT_TRUE(types.count(R_X86_64_REX_GOTPCRELX));
  EXPECT_TRUE(types.count(R_X86_64_PC32));
  EXPECT_FALSE(linked.plan.got.empty());
  EXPECT_FALSE(linked.plan.stubs.empty());
  const std::pair<const char *, Fn> fns[] = {{"pic_calls", pic_calls},
                                             {"pic_callback", pic_callback},
                                             {"pic_switch", pic_switch},
                                             {"pic_strings", pic_strings},
                                             {"pic_vectors", pic_vectors}};
  for (auto [name, native] : fns) {
    Fn linked_fn = linked.fn(name);
    for (long x : kInputs)
      EXPECT_EQ(linked_fn(x), native(x)) << name << "(" << x << ")";
  }
}

TEST(ElfLink, StaticObjectBelowTwoGigabytes) {
  Linked linked;
  link_at(linked, read_object("reloc_static.o"),
          {0x10000000, 0x20000000, 0x30000000, 0x40000000});
  auto types = reloc_types(linked.object);
  EXPECT_TRUE(types.count(R_X86_64_64));
  EXPECT_TRUE(types.count(R_X86_64_32S) || types.count(R_X86_64_32));
  for (auto [name, native] :
       {std::pair<const char *, Fn>{"static_table", static_table},
        {"static_address_of", static_address_of}}) {
    Fn linked_fn = linked.fn(name);
    for (long x : kInputs)
      EXPECT_EQ(linked_fn(x), native(x)) << name << "(" << x << ")";
  }
}

TEST(ElfLink, StaticObjectRefusesAnAddressAbove4GiB) {
  // A parsed object views the bytes it was parsed from: keep them.
  const std::vector<uint8_t> bytes = read_object("reloc_static.o");
  auto object = elf::parse(bytes);
  ASSERT_TRUE(object) << object.error();
  auto plan = elf::plan(*object);
  ASSERT_TRUE(plan) << plan.error();
  auto image = elf::link(*object, *plan, 0x300000000000, test_symbols());
  ASSERT_FALSE(image);
  EXPECT_NE(image.error().find("R_X86_64_32"), std::string::npos)
      << image.error();
}

TEST(ElfLink, RefusesWhatIsNotAnX86RelocatableObject) {
  EXPECT_FALSE(elf::parse(std::vector<uint8_t>{1, 2, 3}));
  // A BPF object: ELF, but not x86-64.
  auto bpf = read_object("../progs/control_flow_v3.o");
  ASSERT_FALSE(bpf.empty());
  auto parsed = elf::parse(bpf);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().find("x86-64"), std::string::npos);
  // Truncated: the section headers are past the end.
  auto pic = read_object("reloc_pic.o");
  pic.resize(pic.size() / 2);
  EXPECT_FALSE(elf::parse(pic));
}

} // namespace
} // namespace ubtrace::jit::test
