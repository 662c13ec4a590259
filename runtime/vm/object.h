// A BPF ELF object after loading: its maps and its programs, each program
// linked into one self-contained instruction array. This is what the verifier,
// the interpreter and the JIT consume; nothing here refers to the ELF file.
#pragma once

#include "runtime/vm/insn.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::vm {

struct MapDef {
  std::string name;  // variable name in .maps, or the section (".rodata")
  uint32_t type = 0; // BPF_MAP_TYPE_*
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t flags = 0; // BPF_F_*; global data carries BPF_F_MMAPABLE
  // .rodata*/.data*/.bss*: a one-element array map whose value is the
  // section; `initial_value` holds its bytes (zeros for .bss).
  bool is_global_data = false;
  bool read_only = false; // .rodata*: programs may not write it
  std::vector<uint8_t> initial_value;
};

// A function inside a linked program: the program's own code comes first
// (start 0), then every subprogram it reaches, each once.
struct Function {
  std::string name;
  uint32_t start = 0; // instruction index in Program::insns
};

// A linked program. Canonical forms of wide instructions after linking:
//   map reference:   src=BPF_PSEUDO_MAP_FD,    imm=map index, next imm=0
//   global data:     src=BPF_PSEUDO_MAP_VALUE, imm=map index, next imm=offset
//   callback:        src=BPF_PSEUDO_FUNC,      imm=target - (pc + 1)
// and pseudo calls (src=BPF_PSEUDO_CALL) hold target - (pc + 1) in imm.
struct Program {
  std::string name;    // the function's symbol name
  std::string section; // its ELF section ("uprobe/foo")
  std::vector<Insn> insns;
  std::vector<Function> functions;
};

// A global variable (an ELF object symbol in a global data section).
struct GlobalVar {
  std::string name;
  uint32_t map = 0;    // index of its section's map
  uint32_t offset = 0; // within the map's value
  uint32_t size = 0;
};

struct Object {
  std::vector<MapDef> maps;
  std::vector<Program> programs;
  std::vector<GlobalVar> globals;
  std::string license;

  // By function name, else by section name.
  const Program *find_program(std::string_view name) const;
  std::optional<uint32_t> find_map(std::string_view name) const;
  const GlobalVar *find_global(std::string_view name) const;
};

} // namespace ubtrace::vm
