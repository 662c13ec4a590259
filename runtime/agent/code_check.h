// Whether code the agent patched is still there: a library the program
// dlclose()s takes its hooks with it, and may come back at the same
// address (fresh, unpatched) or elsewhere. The hook runtime cannot tell,
// so the agent keeps the bytes each patch wrote and asks the loader: a
// patch is intact when a loaded object's executable segment still holds
// those bytes at that address. The loader's list is walked with
// dl_iterate_phdr, whose lock keeps every listed object mapped while the
// bytes are read (dlclose unlists an object under that lock before it
// unmaps it), so no read can fault. Called on the agent's own thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ubtrace::agent {

struct PatchedCode {
  uint64_t at = 0;    // where the patch starts
  uint8_t bytes[8]{}; // what it wrote there
  uint8_t len = 0;
};

// One flag per patch: true while its bytes are in loaded code.
std::vector<bool> patches_intact(std::span<const PatchedCode> patches);

// Whether `addr` lies in a writable segment of the loaded object based at
// `base` (a USDT semaphore's object still there).
bool data_of_object_loaded(uint64_t addr, uint64_t base);

// Objects the loader has unloaded since the process started (cheap).
uint64_t objects_unloaded();

// The objects loaded now, by load bias and name (for telling later which
// of them the program could still unload).
struct LoadedObject {
  uint64_t bias;
  std::string name;
};
std::vector<LoadedObject> loaded_objects();

} // namespace ubtrace::agent
