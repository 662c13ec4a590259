// Run-time state of a launch: per-launch (shared by the host threads that
// run its blocks), per-block (shared memory, lanes) and per-lane (call
// stack of frames, each with its registers and .local/.param memory).
#pragma once

#include "tests/gpu/ptxsim/ir.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ubtrace::ptxsim {

struct Frame {
  const Function *fn = nullptr;
  uint32_t pc = 0;
  uint64_t *regs = nullptr;
  uint8_t *local = nullptr;
  uint8_t *params = nullptr;
  uint8_t *callparams = nullptr;
  const CallSite *site = nullptr; // the call that made this frame
  std::unique_ptr<uint64_t[]> storage;
};

enum class LaneState : uint8_t {
  Runnable,
  Sleeping,   // at nanosleep: runnable after the others had a turn
  Collective, // waiting at a warp collective (pc at it)
  Barrier,    // waiting at bar.sync (pc at it)
  Exited,
};

struct Lane {
  std::vector<Frame> stack;
  LaneState state = LaneState::Runnable;
  uint32_t tid[3] = {0, 0, 0};
  uint32_t linear = 0; // linear thread index in the block
  uint32_t lane = 0;   // linear % 32
};

struct LaunchState {
  const ModuleImpl *module = nullptr;
  const Function *kernel = nullptr;
  Dim3 grid, block;
  uint32_t block_threads = 0;
  uint32_t dynamic_shared = 0;
  uint32_t dynamic_shared_offset =
      0;                     // where dynamic shared starts in the window
  uint32_t shared_bytes = 0; // static + dynamic
  uint8_t *params = nullptr; // the kernel parameter buffer
  const LaunchOptions *options = nullptr;
  std::atomic<uint64_t> instructions{0};
  std::atomic<uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex error_lock;
  std::mutex printf_lock; // the sink sees one message at a time
  std::string error;

  void fail(std::string message) {
    std::lock_guard<std::mutex> hold(error_lock);
    if (!failed.load()) {
      error = std::move(message);
      failed.store(true);
    }
  }
};

struct Block {
  LaunchState *launch = nullptr;
  uint32_t ctaid[3] = {0, 0, 0};
  uint64_t linear = 0;
  std::unique_ptr<uint8_t[]> shared_storage;
  uint8_t *shared = nullptr;
  std::vector<Lane> lanes;
  uint64_t instructions = 0; // not yet added to the launch's count
};

// Why run_lane returned.
enum class LaneStop : uint8_t { Blocked, Preempted, Error };

// Runs one lane until it blocks (collective, barrier, nanosleep, exit) or
// has run `budget` instructions (interp.cpp).
LaneStop run_lane(Block &block, Lane &lane, uint64_t budget);

// Pushes the entry frame of the kernel on a fresh lane.
void start_lane(Block &block, Lane &lane);

// Completes the warp collectives the lanes of one warp wait at, where
// possible (collectives.cpp). `idle`: no lane of the warp can run, so
// activemask groups complete. True if any lane became runnable.
bool resolve_collectives(Block &block, Lane *lanes, uint32_t count);

// The instruction a lane stopped at, and a description for errors.
const Inst &current_inst(const Lane &lane);
std::string describe(const Lane &lane);

// Operand evaluation in a lane's current frame (interp.cpp), for the
// collectives resolver.
uint64_t read_operand(Block &block, Lane &lane, const Operand &o);
void write_reg(Lane &lane, const Operand &o, uint64_t value, Ty type);

// Formats vprintf's format string and argument buffer (vprintf.cpp).
std::string format_vprintf(const char *format, const uint8_t *args,
                           int *arg_count);

} // namespace ubtrace::ptxsim
