// What the front end asks of the traced binaries' debug information: the
// arguments and return type of a uprobe's function (`args`, `retval`),
// types a script names without defining them (`(struct foo *)arg0`), and
// the address of a source line (`uprobe:BIN@FILE:LINE`).
//
// ast/ cannot read DWARF itself (it includes nothing but std and its own
// headers); the CLI hands the context an implementation over
// runtime/symbols' DWARF reader (backends/cli/debug_types.cpp). Without
// one, these features are refused with a located error.
#pragma once

#include "ast/types.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::ast {

struct AttachPoint;
struct CTypes;

// Where a parameter is at its function's entry.
struct ArgPlace {
  enum class Kind : uint8_t {
    Slot,     // the System V integer argument slot `slot` (N of argN)
    Register, // a register the DWARF names (a function the compiler
              // called its own way): `regs_offset` in the probe's pt_regs;
              // `slot` the argument register it is (0..5), else -1
    Constant, // `value`: the compiler propagated it into the function
    // A system call tracepoint's field: the ctx slot `slot` the agent
    // fills from the event's registers (ast/syscalls.h)
    Syscall,
    SyscallArgs, // raw_syscalls:sys_enter's args[6]: the six registers
  };
  Kind kind = Kind::Slot;
  int slot = -1;
  uint32_t regs_offset = 0;
  int64_t value = 0;
  bool operator==(const ArgPlace &) const = default;
};

// The arguments of one function as `args` reads them.
struct FunctionArgs {
  // A Record with one field per parameter that can be read at entry, in
  // order, typed from DWARF (pointers to records refer to `types` entries
  // the implementation added).
  Type record;
  // For each field: where it is at the function's entry.
  std::vector<ArgPlace> places;
  // Parameters left out of `record`, with the reason (a double in an SSE
  // register, a struct passed by value, ...).
  std::map<std::string, std::string> unreadable;
  // The return value's type when rax holds it whole; None otherwise.
  Type ret;
  // How each parameter is declared, for messages: "int *n".
  std::vector<std::string> declared;
};

class DebugTypes {
public:
  virtual ~DebugTypes() = default;
  // The arguments of the function a uprobe/uretprobe attach point names
  // (every function a wildcard matches must agree); nullopt with `error`
  // set when there is no debug info or no such function.
  virtual std::optional<FunctionArgs>
  function_args(const AttachPoint &ap, CTypes &types, std::string &error) = 0;
  // Adds the type `name` ("struct foo", "union u", "enum e", a typedef
  // name) to `types` from the binaries the attach points name; false when
  // none of them defines it.
  virtual bool import_type(const std::string &name,
                           const std::vector<const AttachPoint *> &from,
                           CTypes &types) = 0;
  // The address (in the binary's own addresses) of the first statement at
  // the attach point's source_file:line[:column].
  virtual std::optional<uint64_t> line_address(const AttachPoint &ap,
                                               std::string &error) = 0;
};

} // namespace ubtrace::ast
