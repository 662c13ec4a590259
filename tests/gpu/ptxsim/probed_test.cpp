// vector_add after ubtrace merged its probes into it (testdata/
// vector_add_probed.ptx, taken from the stand-in; script:
//   kernel::vector_add { @threads = count(); @s = sum(threadIdx.x);
//     @h = hist(threadIdx.x); @k[blockIdx.x] = count(); printf("t %d\n",
//     threadIdx.x); }
//   kernelret::vector_add { @ns = hist(nsecs); @x = max(*(uint32*)arg0);
//     @st[func, probe] = stats(arg3); }
// ). The module's map table (__ubt_gpu_maps) is re-baked with host buffers
// allocated here; after the launch the maps must hold what the script
// computes over every thread, laid out as runtime/gpu/device_maps_abi.h
// says, and vector_add's own output must be right.
#include "runtime/gpu/device_maps_abi.h"
#include "tests/gpu/ptxsim/test_support.h"

#include <cstring>
#include <map>
#include <regex>
#include <vector>

namespace ubtrace::ptxsim::test {
namespace {

// vector_add_probed.ptx's table entries, in the order the probes index
// them (map names sorted, then the event ring).
enum VectorAddMap {
  kH = 0,
  kK,
  kNs,
  kS,
  kSt,
  kThreads,
  kX,
  kRing,
  kUnused,
  kExtra
};

constexpr size_t kMapBytes = size_t(2) << 20;
constexpr size_t kRingCapacity = size_t(1) << 20;
constexpr size_t kHashCapacity = 8192;

// Zeroed host buffers for a map table of `entries`; entry `unused` stays 0
// (a map with no device storage), `ring` gets its capacity word.
struct DeviceMaps {
  std::vector<std::unique_ptr<uint64_t[]>> buffers;
  std::vector<uint64_t> address;

  DeviceMaps(int entries, int ring, int unused) : address(entries, 0) {
    for (int i = 0; i < entries; ++i) {
      if (i == unused)
        continue;
      buffers.emplace_back(new uint64_t[kMapBytes / 8]());
      address[i] = reinterpret_cast<uintptr_t>(buffers.back().get());
    }
    words(ring)[UBT_GPU_RING_CAPACITY_WORD] = kRingCapacity;
  }
  uint64_t *words(int entry) {
    return reinterpret_cast<uint64_t *>(address[entry]);
  }
  uint8_t *bytes(int entry) {
    return reinterpret_cast<uint8_t *>(address[entry]);
  }

  // Sum of the u64 at `offset` of every per-SM slot of an array map.
  uint64_t slot_sum(int entry, size_t stride, size_t offset = 0) {
    uint64_t sum = 0;
    for (size_t s = 0; s < UBT_GPU_ARRAY_SLOTS; ++s) {
      uint64_t v;
      std::memcpy(
          &v, bytes(entry) + UBT_GPU_MAP_HEADER_BYTES + s * stride + offset, 8);
      sum += v;
    }
    return sum;
  }
  // Every bucket of every slot of a hist/lhist array map.
  uint64_t hist_total(int entry, size_t stride) {
    uint64_t total = 0;
    for (size_t off = 0; off < stride; off += 8)
      total += slot_sum(entry, stride, off);
    return total;
  }

  // READY entries of a hash map of `capacity` buckets: key bytes -> value
  // words. States after the header, then keys, then values (64-aligned).
  std::vector<std::pair<std::vector<uint8_t>, std::vector<uint64_t>>>
  hash_entries(int entry, size_t capacity, size_t key_stride,
               size_t value_stride) {
    std::vector<std::pair<std::vector<uint8_t>, std::vector<uint64_t>>> out;
    const uint8_t *base = bytes(entry);
    size_t keys_at = UBT_GPU_MAP_HEADER_BYTES + capacity * 8;
    size_t values_at = (keys_at + capacity * key_stride + 63) / 64 * 64;
    const uint8_t *keys = base + keys_at;
    const uint8_t *values = base + values_at;
    for (size_t i = 0; i < capacity; ++i) {
      uint64_t state;
      std::memcpy(&state, base + UBT_GPU_MAP_HEADER_BYTES + i * 8, 8);
      if (!(state & UBT_GPU_HASH_READY))
        continue;
      std::vector<uint8_t> key(keys + i * key_stride,
                               keys + (i + 1) * key_stride);
      std::vector<uint64_t> value(value_stride / 8);
      std::memcpy(value.data(), values + i * value_stride, value_stride);
      out.emplace_back(std::move(key), std::move(value));
    }
    return out;
  }

  // Records in the event ring: (header word, payload).
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>>
  ring_records(int ring) {
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> out;
    const uint8_t *data = bytes(ring) + UBT_GPU_MAP_HEADER_BYTES;
    uint64_t head = words(ring)[UBT_GPU_RING_HEAD_WORD];
    for (uint64_t at = 0; at < head;) {
      uint64_t header;
      std::memcpy(&header, data + at, 8);
      uint64_t length = header & UBT_GPU_RING_LENGTH_MASK;
      out.emplace_back(
          header, std::vector<uint8_t>(data + at + 8, data + at + 8 + length));
      at += (8 + length + 7) / 8 * 8;
      if (length == 0)
        break;
    }
    return out;
  }
};

std::string bake_map_table(const std::string &ptx, const DeviceMaps &maps) {
  std::string table;
  for (size_t i = 0; i < maps.address.size(); ++i)
    table += (i ? ", " : "") + std::to_string(maps.address[i]);
  std::regex init(R"((__ubt_gpu_maps\[[0-9]+\] = )\{[^}]*\})");
  std::string out = std::regex_replace(ptx, init, "$1{" + table + "}");
  EXPECT_NE(out, ptx) << "the map table initializer was not found";
  return out;
}

TEST(PtxsimProbed, VectorAddProbesFillTheMaps) {
  DeviceMaps maps(10, kRing, kUnused);
  auto m =
      load_or_fail(bake_map_table(testdata("vector_add_probed.ptx"), maps));
  ASSERT_TRUE(m);
  auto table = m->global("__ubt_gpu_maps");
  ASSERT_TRUE(table) << table.error();
  ASSERT_EQ(table->second, 80u);
  EXPECT_EQ(static_cast<uint64_t *>(table->first)[kThreads],
            maps.address[kThreads]);

  const int n = 5000;
  const uint32_t block = 256, grid = (n + block - 1) / block;
  const uint64_t threads = uint64_t(grid) * block;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) + 0.5f;
    b[i] = static_cast<float>((i * 7) % 1000) * 0.5f;
  }
  const float *pa = a.data(), *pb = b.data();
  float *pc = c.data();
  int count = n;
  void *params[] = {&pa, &pb, &pc, &count};
  LaunchOptions options;
  options.host_threads = 4;
  options.max_instructions = uint64_t(1) << 32;
  auto stats =
      m->launch("_Z10vector_addPKfS0_Pfi", {grid}, {block}, 0, params, options);
  ASSERT_TRUE(stats) << stats.error();
  EXPECT_EQ(stats->threads, threads);

  for (int i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << i;

  // @threads = count(): per-SM slots of 64 bytes.
  EXPECT_EQ(maps.slot_sum(kThreads, 64), threads);
  // @s = sum(threadIdx.x): a two-bucket hash map with the one key 0.
  auto sums = maps.hash_entries(kS, 2, 8, 8);
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].second[0], uint64_t(grid) * (block * (block - 1) / 2));
  // @h = hist(threadIdx.x), @ns = hist(nsecs): 72 buckets per slot, each
  // thread counted once.
  EXPECT_EQ(maps.hist_total(kH, 576), threads);
  EXPECT_EQ(maps.hist_total(kNs, 576), threads);
  // hist(0) is bucket 1 (after the negative bucket), hist(1) bucket 2; one
  // thread per block each.
  EXPECT_EQ(maps.slot_sum(kH, 576, 8), grid);
  EXPECT_EQ(maps.slot_sum(kH, 576, 16), grid);

  // @k[blockIdx.x] = count(): one entry per block, 256 each.
  auto k = maps.hash_entries(kK, kHashCapacity, 8, 8);
  std::map<uint64_t, uint64_t> per_block;
  for (auto &[key, value] : k) {
    uint64_t id;
    std::memcpy(&id, key.data(), 8);
    per_block[id] += value[0];
  }
  ASSERT_EQ(per_block.size(), grid);
  for (uint32_t i = 0; i < grid; ++i)
    EXPECT_EQ(per_block[i], block) << "block " << i;
  EXPECT_EQ(maps.words(kK)[UBT_GPU_MAP_DROPS_WORD], 0u);

  // @x = max(*(uint32 *)arg0): every thread reads a[0]'s bits.
  uint32_t a0;
  std::memcpy(&a0, &a[0], 4);
  uint64_t x_max = 0;
  for (size_t s = 0; s < UBT_GPU_ARRAY_SLOTS; ++s) {
    uint64_t v;
    std::memcpy(&v, maps.bytes(kX) + 64 + s * 64, 8);
    x_max = std::max(x_max, v);
  }
  EXPECT_EQ(x_max, a0);

  // @st[func, probe] = stats(arg3): one key; the value is (total, count).
  auto st = maps.hash_entries(kSt, kHashCapacity, 24, 16);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].second[0], threads * n);
  EXPECT_EQ(st[0].second[1], threads);

  // printf: one ring record per thread (8-byte header, 24-byte payload
  // whose last word is printf's argument).
  uint64_t *ring = maps.words(kRing);
  EXPECT_EQ(ring[UBT_GPU_RING_HEAD_WORD], threads * 32);
  EXPECT_EQ(ring[UBT_GPU_RING_DROPS_WORD], 0u);
  std::map<uint64_t, uint64_t> printed_tids;
  for (auto &[header, payload] : maps.ring_records(kRing)) {
    ASSERT_EQ(header, UBT_GPU_RING_READY | 24);
    uint64_t tid;
    std::memcpy(&tid, payload.data() + 16, 8);
    printed_tids[tid]++;
  }
  ASSERT_EQ(printed_tids.size(), block);
  for (auto &[tid, times] : printed_tids)
    EXPECT_EQ(times, grid) << "tid " << tid;
}

// matmul with probes on entry and exit (testdata/matmul_probed.ptx):
//   kernel::matmul_tiled { @c[blockIdx.x, blockIdx.y] = count();
//     @l = lhist(threadIdx.y, 0, 16, 4); @mn = min(threadIdx.x);
//     @a = avg(threadIdx.x);
//     if (threadIdx.x == 3 && threadIdx.y == 5) {
//       printf("b %d %d\n", blockIdx.x, blockIdx.y); } }
//   kernelret::matmul_tiled { @w[warpid] = count(); @lane = hist(laneid); }
// Two-dimensional blocks, barriers between the probes, one printf per block.
enum MatmulMap {
  kA = 0,
  kC,
  kL,
  kLane,
  kMn,
  kW,
  kMatmulRing,
  kMatmulUnused,
  kMatmulExtra
};

TEST(PtxsimProbed, MatmulProbesOnTwoDimensionalBlocks) {
  DeviceMaps maps(9, kMatmulRing, kMatmulUnused);
  auto m = load_or_fail(bake_map_table(testdata("matmul_probed.ptx"), maps));
  ASSERT_TRUE(m);
  int n = 64;
  size_t count = size_t(n) * n;
  std::vector<float> a(count), b(count), c(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 17) * 0.25f;
    b[i] = static_cast<float>(i % 13) * 0.5f;
  }
  const float *pa = a.data(), *pb = b.data();
  float *pc = c.data();
  void *params[] = {&pa, &pb, &pc, &n};
  LaunchOptions options;
  options.host_threads = 3;
  options.max_instructions = uint64_t(1) << 32;
  auto stats = m->launch("_Z12matmul_tiledPKfS0_Pfi", {4, 4}, {16, 16}, 0,
                         params, options);
  ASSERT_TRUE(stats) << stats.error();
  const uint64_t threads = 16 * 256;
  ASSERT_EQ(stats->threads, threads);
  // The kernel's own result: exact (small multiples of 1/8).
  for (int row = 0; row < n; ++row)
    for (int col = 0; col < n; ++col) {
      float acc = 0;
      for (int k = 0; k < n; ++k)
        acc += a[row * n + k] * b[k * n + col];
      ASSERT_EQ(c[row * n + col], acc) << row << "," << col;
    }
  // @c[bx, by]: 16 keys of 256.
  auto per_block = maps.hash_entries(kC, kHashCapacity, 16, 8);
  ASSERT_EQ(per_block.size(), 16u);
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> seen;
  for (auto &[key, value] : per_block) {
    uint64_t bx, by;
    std::memcpy(&bx, key.data(), 8);
    std::memcpy(&by, key.data() + 8, 8);
    seen[{bx, by}] = value[0];
  }
  for (uint64_t x = 0; x < 4; ++x)
    for (uint64_t y = 0; y < 4; ++y)
      EXPECT_EQ((seen[{x, y}]), 256u) << x << "," << y;
  // @w[warpid] on exit: 8 warps per block.
  auto per_warp = maps.hash_entries(kW, kHashCapacity, 8, 8);
  ASSERT_EQ(per_warp.size(), 8u);
  for (auto &[key, value] : per_warp)
    EXPECT_EQ(value[0], 16u * 32u);
  // @lane = hist(laneid): every thread once, lanes 0 and 1 in buckets 1, 2.
  EXPECT_EQ(maps.hist_total(kLane, 576), threads);
  EXPECT_EQ(maps.slot_sum(kLane, 576, 8), threads / 32);
  // One printf per block.
  auto records = maps.ring_records(kMatmulRing);
  EXPECT_EQ(records.size(), 16u);
  for (auto &[header, payload] : records)
    EXPECT_TRUE(header & UBT_GPU_RING_READY);
}

} // namespace
} // namespace ubtrace::ptxsim::test
