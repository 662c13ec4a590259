// Launches: blocks go to host threads through a shared counter (so device
// atomics contend for real); inside a block, each warp's lanes run one at a
// time until each blocks, then the warp's collectives complete, and when no
// warp can move the block's barrier releases (or the block is deadlocked).
#include "tests/gpu/ptxsim/exec.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace ubtrace::ptxsim {
namespace {

// Instructions a lane runs before others get a turn (a lane spinning on
// another warp's store must not starve it).
constexpr uint64_t kSlice = uint64_t(1) << 20;

enum class WarpRun { Stuck, Yielded, Error };

bool over_limit(Block &block) {
  LaunchState &l = *block.launch;
  uint64_t max = l.options->max_instructions;
  uint64_t total =
      l.instructions.fetch_add(block.instructions) + block.instructions;
  block.instructions = 0;
  return max != 0 && total > max;
}

WarpRun run_warp(Block &block, Lane *lanes, uint32_t count, uint64_t budget) {
  LaunchState &l = *block.launch;
  for (;;) {
    bool yielded = false;
    Lane *last = nullptr;
    for (uint32_t i = 0; i < count; ++i) {
      Lane &lane = lanes[i];
      if (lane.state != LaneState::Runnable)
        continue;
      LaneStop stop = run_lane(block, lane, budget);
      if (stop == LaneStop::Error)
        return WarpRun::Error;
      if (stop == LaneStop::Preempted || lane.state == LaneState::Sleeping)
        yielded = true;
      last = &lane;
    }
    if (l.options->max_instructions != 0 && over_limit(block)) {
      l.fail("instruction limit (" +
             std::to_string(l.options->max_instructions) + ") exceeded" +
             (last ? ", last at " + describe(*last) : std::string()));
      return WarpRun::Error;
    }
    if (l.failed.load(std::memory_order_relaxed))
      return WarpRun::Error;
    // Lanes at nanosleep had their turn: runnable again.
    for (uint32_t i = 0; i < count; ++i)
      if (lanes[i].state == LaneState::Sleeping) {
        lanes[i].state = LaneState::Runnable;
        yielded = true;
      }
    if (yielded)
      return WarpRun::Yielded;
    if (!resolve_collectives(block, lanes, count))
      return WarpRun::Stuck;
  }
}

bool run_block(LaunchState &l, Block &block, uint64_t index) {
  block.linear = index;
  block.ctaid[0] = static_cast<uint32_t>(index % l.grid.x);
  block.ctaid[1] = static_cast<uint32_t>(index / l.grid.x % l.grid.y);
  block.ctaid[2] =
      static_cast<uint32_t>(index / (uint64_t(l.grid.x) * l.grid.y));
  if (l.shared_bytes)
    std::memset(block.shared, 0, l.shared_bytes);
  uint32_t n = l.block_threads;
  block.lanes.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Lane &lane = block.lanes[i];
    lane.linear = i;
    lane.lane = i % 32;
    lane.tid[0] = i % l.block.x;
    lane.tid[1] = i / l.block.x % l.block.y;
    lane.tid[2] = i / (l.block.x * l.block.y);
    start_lane(block, lane);
  }
  uint64_t max = l.options->max_instructions;
  uint64_t budget = max != 0 && max < kSlice ? max + 1 : kSlice;
  uint32_t warps = (n + 31) / 32;
  for (;;) {
    bool yielded = false;
    for (uint32_t w = 0; w < warps; ++w) {
      uint32_t count = std::min<uint32_t>(32, n - w * 32);
      WarpRun r = run_warp(block, block.lanes.data() + w * 32, count, budget);
      if (r == WarpRun::Error)
        return false;
      if (r == WarpRun::Yielded)
        yielded = true;
    }
    if (yielded)
      continue;
    uint32_t exited = 0;
    const Lane *stuck = nullptr; // waiting at a collective that cannot complete
    for (const Lane &lane : block.lanes) {
      if (lane.state == LaneState::Exited)
        ++exited;
      else if (lane.state != LaneState::Barrier && !stuck)
        stuck = &lane;
    }
    if (exited == n)
      break;
    if (stuck) {
      l.fail("warp deadlock at " + describe(*stuck) + " (thread " +
             std::to_string(stuck->linear) + " of block " +
             std::to_string(index) + ")");
      return false;
    }
    // Every thread that has not exited waits at a barrier: release them.
    for (Lane &lane : block.lanes)
      if (lane.state == LaneState::Barrier) {
        lane.stack.back().pc++;
        lane.state = LaneState::Runnable;
      }
  }
  for (Lane &lane : block.lanes)
    lane.stack.clear();
  over_limit(block);
  return true;
}

void worker(LaunchState &l, uint64_t blocks) {
  Block block;
  block.launch = &l;
  size_t shared_alloc = l.shared_bytes + 64;
  block.shared_storage.reset(new uint8_t[shared_alloc]());
  uintptr_t p = reinterpret_cast<uintptr_t>(block.shared_storage.get());
  block.shared = reinterpret_cast<uint8_t *>((p + 63) / 64 * 64);
  for (;;) {
    if (l.failed.load(std::memory_order_relaxed))
      return;
    uint64_t index = l.next_block.fetch_add(1);
    if (index >= blocks)
      return;
    if (!run_block(l, block, index))
      return;
  }
}

} // namespace

Result<LaunchStats> launch_kernel(const ModuleImpl &module,
                                  const Function &kernel, Dim3 grid, Dim3 block,
                                  uint32_t dynamic_shared_bytes,
                                  void *const *params,
                                  const LaunchOptions &options) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 ||
      block.y == 0 || block.z == 0)
    return make_error("launch of '" + kernel.name +
                      "' with an empty grid or block");
  uint64_t threads_per_block = uint64_t(block.x) * block.y * block.z;
  if (threads_per_block > 1024)
    return make_error("launch of '" + kernel.name + "' with " +
                      std::to_string(threads_per_block) +
                      " threads per block (at most 1024)");
  if (!params && !kernel.params.empty())
    return make_error("launch of '" + kernel.name + "' without its parameters");
  LaunchState l;
  l.module = &module;
  l.kernel = &kernel;
  l.grid = grid;
  l.block = block;
  l.block_threads = static_cast<uint32_t>(threads_per_block);
  l.dynamic_shared = dynamic_shared_bytes;
  l.dynamic_shared_offset = (module.shared_static_bytes + 15) / 16 * 16;
  l.shared_bytes = l.dynamic_shared_offset + dynamic_shared_bytes;
  l.options = &options;
  std::unique_ptr<uint64_t[]> param_buffer(
      new uint64_t[(kernel.param_bytes + 15) / 8 + 1]());
  l.params = reinterpret_cast<uint8_t *>(param_buffer.get());
  for (size_t i = 0; i < kernel.params.size(); ++i)
    std::memcpy(l.params + kernel.params[i].offset, params[i],
                kernel.params[i].size);
  uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  unsigned host_threads = options.host_threads;
  if (host_threads == 0)
    host_threads =
        std::min(std::max(std::thread::hardware_concurrency(), 1u), 4u);
  host_threads =
      static_cast<unsigned>(std::min<uint64_t>(host_threads, blocks));
  std::vector<std::thread> helpers;
  for (unsigned i = 1; i < host_threads; ++i)
    helpers.emplace_back([&l, blocks] { worker(l, blocks); });
  worker(l, blocks);
  for (std::thread &t : helpers)
    t.join();
  if (l.failed.load())
    return make_error(l.error);
  LaunchStats stats;
  stats.instructions = l.instructions.load();
  stats.threads = blocks * threads_per_block;
  return stats;
}

} // namespace ubtrace::ptxsim
