// Which function a call in the target called, from the return address the
// call pushed: the instruction before it is decoded as a direct call
// (e8 rel32) or a call through a GOT slot (ff 15 disp32, -fno-plt), and a
// direct call to a PLT entry is followed through its jump slot (ff 25,
// with the endbr64 / bnd prefixes of .plt.sec). The slot is read as it is
// now: the function a lazily bound call resolved to once it ran. Anything
// else (a call through a register, a PLT form not known here): nullopt.
#pragma once

#include "runtime/inject/remote_memory.h"

#include <cstdint>
#include <optional>

namespace ubtrace::runtime::inject {

std::optional<uint64_t> called_function(uint64_t return_address,
                                        const RemoteMemory &memory);

} // namespace ubtrace::runtime::inject
