// Remote images, run for real: real programs are compiled to a relocatable
// object, linked for an address chosen here, mapped there (RW, copy, RX) in
// this process as the agent maps them in a traced one, and called. Results
// and maps must match the interpreter's. Placed far (> 2 GiB) from the
// helpers, calls go through stubs or the GOT; placed near, directly.
#include "runtime/jit/elf_link.h"
#include "runtime/jit/remote_image.h"
#include "runtime/maps/helpers.h"
#include "runtime/maps/region.h"
#include "runtime/vm/loader.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <random>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

namespace ubtrace::jit::test {
namespace {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr uint32_t kCtxSize = 64;

struct Programs {
  vm::Object object;
  std::vector<vm::VerifiedProgram> verified;
};

Programs load(const std::string &file) {
  Programs out;
  auto object =
      vm::load_object(read_file(std::string(UBT_JIT_PROGS_DIR) + "/" + file));
  if (!object) {
    ADD_FAILURE() << object.error();
    return out;
  }
  out.object = std::move(*object);
  for (const vm::Program &p : out.object.programs) {
    auto v = vm::verify(p, out.object.maps, vm::standard_helpers(),
                        vm::ContextInfo{kCtxSize});
    if (!v) {
      ADD_FAILURE() << p.name << ": " << v.error();
      continue;
    }
    out.verified.push_back(std::move(*v));
  }
  return out;
}

// This process as the target: helpers and libc at their addresses here.
SymbolTable target_symbols(const vm::HelperImpls &helpers) {
  SymbolTable symbols;
  for (size_t id = 0; id < helpers.by_id().size(); ++id)
    if (helpers.by_id()[id])
      symbols[helper_symbol(int32_t(id))] =
          reinterpret_cast<uint64_t>(helpers.by_id()[id]);
  symbols[kMapIterateSymbol] = reinterpret_cast<uint64_t>(&ubt_map_iterate);
  symbols["memset"] = reinterpret_cast<uint64_t>(&memset);
  symbols["memcpy"] = reinterpret_cast<uint64_t>(&memcpy);
  symbols["memmove"] = reinterpret_cast<uint64_t>(&memmove);
  return symbols;
}

// Pages mapped at a chosen address, as the agent maps an image.
class MappedImage {
public:
  // Reserves `size` bytes at exactly `address`, or fails.
  bool reserve(uint64_t address, uint64_t size) {
    size_ = (size + 4095) & ~uint64_t(4095);
    void *p =
        mmap(reinterpret_cast<void *>(address), size_, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
      return false;
    if (reinterpret_cast<uint64_t>(p) != address) {
      munmap(p, size_);
      return false;
    }
    base_ = p;
    return true;
  }
  bool load(const RemoteImage &image) {
    std::memcpy(base_, image.bytes.data(), image.bytes.size());
    return mprotect(base_, size_, PROT_READ | PROT_EXEC) == 0;
  }
  ProgramEntry entry(uint64_t offset) const {
    return reinterpret_cast<ProgramEntry>(static_cast<uint8_t *>(base_) +
                                          offset);
  }
  ~MappedImage() {
    if (base_)
      munmap(base_, size_);
  }

private:
  void *base_ = nullptr;
  uint64_t size_ = 0;
};

// An address at least 4 GiB from this binary, libc and the heap.
uint64_t far_address() {
  return 0x300000000000ull; // 48 TiB: above the heap, below mmap's usual range
}

// An address within 1 GiB of this binary's code (and so of the helpers).
uint64_t near_address(uint64_t size) {
  auto here = reinterpret_cast<uint64_t>(&ubt_map_iterate);
  for (uint64_t delta = 64 << 20; delta < (1ull << 30); delta += 64 << 20) {
    uint64_t at = (here + delta) & ~uint64_t(0xffff);
    void *p = mmap(reinterpret_cast<void *>(at), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
      continue;
    munmap(p, size);
    if (reinterpret_cast<uint64_t>(p) == at)
      return at;
  }
  return 0;
}

std::vector<std::vector<uint8_t>> inputs() {
  std::mt19937_64 rng(99);
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < 60; ++i) {
    uint64_t args[8];
    for (uint64_t &a : args)
      a = rng() >> (rng() % 64);
    auto *p = reinterpret_cast<const uint8_t *>(args);
    out.emplace_back(p, p + kCtxSize);
  }
  return out;
}

// Relocation types in the object, for checking what a test exercised.
std::set<uint32_t> reloc_types(const RemoteObject &obj) {
  std::set<uint32_t> types;
  auto parsed = elf::parse(obj.elf);
  EXPECT_TRUE(parsed) << parsed.error();
  if (parsed)
    for (const elf::Reloc &r : parsed->relocs)
      types.insert(r.type);
  return types;
}

bool has_placed_rodata(const RemoteObject &obj) {
  auto parsed = elf::parse(obj.elf);
  if (!parsed)
    return false;
  for (const elf::Section &s : parsed->sections)
    if ((s.flags & SHF_ALLOC) && !(s.flags & SHF_EXECINSTR) &&
        s.name.rfind(".rodata", 0) == 0 && s.size > 0)
      return true;
  return false;
}

enum class Where { Far, Near, Low };

struct Placement {
  const char *name;
  Where where;
  bool through_got;
  bool pic = true;
};

// A free address below 2 GiB, for code compiled without PIC.
uint64_t low_address(uint64_t size) {
  for (uint64_t at = 0x10000000; at < 0x80000000; at += 0x10000000) {
    void *p = mmap(reinterpret_cast<void *>(at), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
      continue;
    munmap(p, size);
    if (reinterpret_cast<uint64_t>(p) == at)
      return at;
  }
  return 0;
}

class RemoteImageRun
    : public testing::TestWithParam<std::tuple<std::string, Placement>> {};

TEST_P(RemoteImageRun, MatchesTheInterpreter) {
  auto [file, placement] = GetParam();
  Programs progs = load(file);
  ASSERT_FALSE(progs.verified.empty());
  auto interp_maps = RegionMaps::for_object(progs.object);
  auto image_maps = RegionMaps::for_object(progs.object);
  ASSERT_TRUE(interp_maps && image_maps);
  const vm::HelperImpls &helpers = region_helpers();

  std::vector<RemoteProgram> remote;
  for (const vm::VerifiedProgram &v : progs.verified)
    remote.push_back({&v, "ubt_entry_" + v.name});
  RemoteOptions options;
  options.helpers.call_through_got = placement.through_got;
  options.pic = placement.pic;
  std::vector<MapConstants> constants = map_constants(image_maps->bindings());
  auto object = compile_remote_object(remote, constants, options);
  ASSERT_TRUE(object) << object.error();
  ASSERT_EQ(object->entries.size(), remote.size());
  for (const std::string &name : object->required_symbols)
    EXPECT_TRUE(target_symbols(helpers).count(name)) << name;

  uint64_t address = 0;
  switch (placement.where) {
  case Where::Far:
    address = far_address();
    break;
  case Where::Near:
    address = near_address(object->image_size + 4096);
    break;
  case Where::Low:
    address = low_address(object->image_size + 4096);
    break;
  }
  ASSERT_NE(address, 0u) << "no free address near the binary";
  ASSERT_EQ(address % object->alignment, 0u);
  MappedImage mapped;
  ASSERT_TRUE(mapped.reserve(address, object->image_size))
      << "cannot map at " << hex_u64(address);
  auto image = link_remote_image(*object, address, target_symbols(helpers));
  ASSERT_TRUE(image) << image.error();
  ASSERT_EQ(image->bytes.size(), object->image_size);
  ASSERT_TRUE(mapped.load(*image));

  std::vector<vm::BoundProgram> bound;
  for (const vm::VerifiedProgram &v : progs.verified) {
    auto b = vm::bind_program(v, interp_maps->bindings(), helpers);
    ASSERT_TRUE(b) << b.error();
    bound.push_back(std::move(*b));
  }
  for (const std::vector<uint8_t> &ctx : inputs())
    for (size_t i = 0; i < bound.size(); ++i) {
      std::vector<uint8_t> a = ctx, b = ctx;
      vm::RunResult r = vm::run(bound[i], a.data());
      ASSERT_EQ(r.status, vm::RunStatus::Ok);
      uint64_t offset = image->offset_of(remote[i].entry);
      ASSERT_LT(offset, image->bytes.size());
      uint64_t r0 = mapped.entry(offset)(b.data());
      ASSERT_EQ(hex_u64(r0), hex_u64(r.r0))
          << progs.verified[i].name << " on " << hex_bytes(ctx);
    }
  EXPECT_EQ(image_maps->dump(), interp_maps->dump());

  std::set<uint32_t> types = reloc_types(*object);
  if (placement.through_got && !object->required_symbols.empty())
    EXPECT_TRUE(types.count(R_X86_64_GOTPCRELX) ||
                types.count(R_X86_64_REX_GOTPCRELX) ||
                types.count(R_X86_64_GOTPCREL));
  if (!placement.through_got && !object->required_symbols.empty())
    EXPECT_TRUE(types.count(R_X86_64_PLT32));
}

INSTANTIATE_TEST_SUITE_P(
    Programs, RemoteImageRun,
    testing::Combine(testing::Values("aggregations_v3.o", "callbacks_deep_v4.o",
                                     "control_flow_v3.o", "control_flow_v4.o"),
                     testing::Values(Placement{"far_plt", Where::Far, false},
                                     Placement{"far_got", Where::Far, true},
                                     Placement{"near_plt", Where::Near, false},
                                     Placement{"low_static", Where::Low, false,
                                               false})),
    [](const auto &info) {
      std::string file = std::get<0>(info.param);
      return file.substr(0, file.find('.')) + "_" +
             std::get<1>(info.param).name;
    });

// The programs that make constant pools and jump tables put them in .rodata
// sections of the object, which the image carries.
TEST(RemoteImage, ConstantPoolsAndJumpTablesAreInTheImage) {
  Programs progs = load("control_flow_v4.o");
  ASSERT_FALSE(progs.verified.empty());
  std::vector<RemoteProgram> remote;
  for (const vm::VerifiedProgram &v : progs.verified)
    remote.push_back({&v, "e_" + v.name});
  auto maps = RegionMaps::for_object(progs.object);
  ASSERT_TRUE(maps);
  auto object =
      compile_remote_object(remote, map_constants(maps->bindings()), {});
  ASSERT_TRUE(object) << object.error();
  EXPECT_TRUE(has_placed_rodata(*object));
  EXPECT_TRUE(reloc_types(*object).count(R_X86_64_PC32));
}

// The agent's situation: the CLI binds the programs to its own mapping of
// the region, the target has mapped the same region elsewhere. The image
// gets the target's addresses (rebase_maps) and updates the maps through
// the target's mapping; the CLI sees the updates through its own.
TEST(RemoteImage, RunsAgainstTheTargetsMappingOfTheRegion) {
  Programs progs = load("aggregations_v4.o");
  ASSERT_FALSE(progs.verified.empty());
  auto cli_maps = RegionMaps::for_object(progs.object);
  auto interp_maps = RegionMaps::for_object(progs.object);
  ASSERT_TRUE(cli_maps && interp_maps);
  auto target = runtime::maps::Region::attach(cli_maps->region().fd());
  ASSERT_TRUE(target) << target.error();
  uint64_t cli_base = reinterpret_cast<uint64_t>(cli_maps->region().base());
  uint64_t target_base = reinterpret_cast<uint64_t>(target->base());
  ASSERT_NE(cli_base, target_base);
  std::vector<MapConstants> constants =
      rebase_maps(cli_maps->bindings(), cli_base, target_base);
  for (uint32_t i = 0; i < constants.size(); ++i)
    EXPECT_EQ(constants[i].handle, reinterpret_cast<uint64_t>(target->map(i)));

  std::vector<RemoteProgram> remote;
  for (const vm::VerifiedProgram &v : progs.verified)
    remote.push_back({&v, "p_" + v.name});
  auto object = compile_remote_object(remote, constants);
  ASSERT_TRUE(object) << object.error();
  MappedImage mapped;
  ASSERT_TRUE(mapped.reserve(far_address(), object->image_size));
  auto image = link_remote_image(*object, far_address(),
                                 target_symbols(region_helpers()));
  ASSERT_TRUE(image) << image.error();
  ASSERT_TRUE(mapped.load(*image));

  std::vector<vm::BoundProgram> bound;
  for (const vm::VerifiedProgram &v : progs.verified) {
    auto b = vm::bind_program(v, interp_maps->bindings(), region_helpers());
    ASSERT_TRUE(b) << b.error();
    bound.push_back(std::move(*b));
  }
  for (const std::vector<uint8_t> &ctx : inputs())
    for (size_t i = 0; i < bound.size(); ++i) {
      std::vector<uint8_t> a = ctx, b = ctx;
      vm::RunResult r = vm::run(bound[i], a.data());
      uint64_t r0 = mapped.entry(image->offset_of(remote[i].entry))(b.data());
      ASSERT_EQ(hex_u64(r0), hex_u64(r.r0)) << progs.verified[i].name;
    }
  EXPECT_EQ(cli_maps->dump(), interp_maps->dump());
}

TEST(RemoteImage, LinkFailsOnMissingSymbolsAndMisalignedAddresses) {
  Programs progs = load("aggregations_v3.o");
  ASSERT_FALSE(progs.verified.empty());
  auto maps = RegionMaps::for_object(progs.object);
  ASSERT_TRUE(maps);
  RemoteProgram p{&progs.verified[0], "entry"};
  auto object = compile_remote_object(std::span(&p, 1),
                                      map_constants(maps->bindings()), {});
  ASSERT_TRUE(object) << object.error();
  ASSERT_FALSE(object->required_symbols.empty());
  SymbolTable symbols = target_symbols(region_helpers());
  symbols.erase(helper_symbol(BPF_FUNC_map_lookup_elem));
  auto missing = link_remote_image(*object, far_address(), symbols);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find(helper_symbol(BPF_FUNC_map_lookup_elem)),
            std::string::npos)
      << missing.error();
  auto misaligned = link_remote_image(*object, far_address() + 1,
                                      target_symbols(region_helpers()));
  ASSERT_FALSE(misaligned);
  EXPECT_NE(misaligned.error().find("aligned"), std::string::npos);
}

TEST(RemoteImage, UnavailableHelpersFailTheCompile) {
  Programs progs = load("aggregations_v3.o");
  ASSERT_FALSE(progs.verified.empty());
  auto maps = RegionMaps::for_object(progs.object);
  ASSERT_TRUE(maps);
  RemoteProgram p{&progs.verified[0], "entry"};
  RemoteOptions options;
  options.helpers.available = {BPF_FUNC_map_lookup_elem};
  auto object = compile_remote_object(std::span(&p, 1),
                                      map_constants(maps->bindings()), options);
  ASSERT_FALSE(object);
  EXPECT_NE(object.error().find("not available"), std::string::npos)
      << object.error();
}

} // namespace
} // namespace ubtrace::jit::test
