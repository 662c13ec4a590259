#include "runtime/hook/trap_table.h"

namespace ubtrace::runtime::hook {
namespace {

TrapEntry g_table[kTrapTableSize]; // zero pages until used

uint32_t home(uint64_t address) {
  uint64_t h = address * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(h >> 40) & (kTrapTableSize - 1);
}

TrapEntry *lookup(uint64_t address, bool claim) {
  uint32_t i = home(address);
  for (uint32_t probes = 0; probes < kTrapTableSize; ++probes) {
    TrapEntry &e = g_table[i];
    uint64_t a = e.address.load(std::memory_order_acquire);
    if (a == address)
      return &e;
    if (a == 0)
      return claim ? &e : nullptr;
    i = (i + 1) & (kTrapTableSize - 1);
  }
  return nullptr;
}

} // namespace

bool trap_table_add(uint64_t address, TrapKind kind, uint8_t trap_byte,
                    uint64_t target, Site *site) {
  TrapEntry *e = lookup(address, true);
  if (!e)
    return false;
  e->active.store(false, std::memory_order_relaxed);
  e->kind = kind;
  e->trap_byte = trap_byte;
  e->target = target;
  e->site = site;
  // Publishes the fields above to handlers that find the address.
  e->address.store(address, std::memory_order_release);
  return true;
}

void trap_table_set_active(uint64_t address, bool active) {
  if (TrapEntry *e = lookup(address, false))
    e->active.store(active, std::memory_order_release);
}

const TrapEntry *trap_table_find(uint64_t address) {
  return lookup(address, false);
}

} // namespace ubtrace::runtime::hook
