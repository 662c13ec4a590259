// The regions this process has mapped, in process-local memory.
//
// A thread that claims a thread slot locks the slot's robust mutex, and glibc
// links that mutex into the thread's robust list: if the region were unmapped
// while the mutex is held, the next robust-mutex operation of that thread (in
// the traced program's own code) would touch unmapped memory. So a mapping
// counts the slots this process's threads hold through it, and unmapping
// waits until the count is zero: Region's destructor orphans the mapping and
// the last release unmaps it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ubtrace::runtime::maps::registry {

// Records a new mapping; false when the (fixed-size) table is full.
bool add(void *base, uint64_t size);

// A thread claims (acquire) or releases a slot through the mapping at base.
// acquire fails when base is not a live mapping of this process.
bool acquire(const void *base);
void release(const void *base);

// The owner no longer needs the mapping: unmap it now if no slot is held
// through it, else when the last one is released.
void orphan(void *base);

// After fork(), the child's threads hold no slots.
void reset_claims_in_child();

} // namespace ubtrace::runtime::maps::registry
