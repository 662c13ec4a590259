// Finding the fatbins of a host ELF file (executable, shared library or
// relocatable object) from its bytes: the containers in .nv_fatbin (and
// __nv_relfatbin for -rdc code), and which wrapper of .nvFatBinSegment
// registers each one. Used offline (listing kernels, tests); at run time the
// agent gets fatbins from the driver calls instead (image.h).
#pragma once

#include "runtime/gpu/fatbin.h"

#include <string>
#include <vector>

namespace ubtrace::runtime::gpu {

struct ElfFatbin {
  std::string section;         // the section that holds it
  uint64_t file_offset = 0;    // of the container header in the file
  int wrapper_index = -1;      // which .nvFatBinSegment wrapper points here
  int32_t wrapper_version = 0; // 1 module, 2 device-linked; 0 if none
  Fatbin fatbin;               // views into the file bytes
};

struct ElfFatbins {
  std::vector<ElfFatbin> fatbins;     // in file order
  size_t wrapper_count = 0;           // wrappers in .nvFatBinSegment
  bool has_module_id_section = false; // __nv_module_id (nvcc's marker)
};

// `file` must stay alive while the result is used.
Result<ElfFatbins> find_elf_fatbins(Bytes file);

} // namespace ubtrace::runtime::gpu
