// Opens a BPF ELF object as clang -target bpf emits it (BTF-defined maps in
// .maps, global data in .rodata*/.data*/.bss*, programs in their own sections,
// subprograms in .text) and links each program. Nothing is loaded into a
// kernel; every failure names what is wrong.
#pragma once

#include "runtime/result.h"
#include "runtime/vm/object.h"

#include <cstdint>
#include <span>

namespace ubtrace::vm {

Result<Object> load_object(std::span<const uint8_t> elf_bytes);

} // namespace ubtrace::vm
