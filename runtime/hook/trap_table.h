// The addresses where a trap is ours, and what to do about it: read by the
// signal handlers (lock-free, async-signal-safe), written by the installer
// under its lock. Fixed-size open addressing; entries are never removed
// (sites live forever), only switched inactive.
#pragma once

#include <atomic>
#include <cstdint>

namespace ubtrace::runtime::hook {

struct Site;

enum class TrapKind : uint8_t {
  // The patch address: a Jump site's transient int3 (while patching) or a
  // Trap site's permanent one.
  SiteEntry,
  // An instruction start inside a Jump site's patch: a thread resuming
  // there goes to the relocated copy of that instruction.
  Boundary,
};

struct TrapEntry {
  std::atomic<uint64_t> address{0}; // 0: empty
  std::atomic<bool> active{false};
  TrapKind kind = TrapKind::SiteEntry;
  uint8_t trap_byte = 0; // the byte we put there
  uint64_t target = 0;   // Boundary: where to resume
  Site *site = nullptr;
};

inline constexpr uint32_t kTrapTableSize = 16384; // a power of two

// Adds (or updates) an inactive entry; false when the table is full.
bool trap_table_add(uint64_t address, TrapKind kind, uint8_t trap_byte,
                    uint64_t target, Site *site);
void trap_table_set_active(uint64_t address, bool active);
// The entry for address, or null.
const TrapEntry *trap_table_find(uint64_t address);

} // namespace ubtrace::runtime::hook
