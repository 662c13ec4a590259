// Types, functions and source lines from a binary's DWARF (libdw), for the
// front end: `args` of uprobes, `retval`'s type, struct types used in casts
// without C definitions, `-lv` listings and `uprobe:BIN@FILE:LINE` probes.
//
// The DWARF is read from the binary, its separate debug file
// (debug_file.h: build id, .gnu_debuglink, --debuginfo directories) or,
// for split DWARF, the .dwo files its skeleton units name (libdw finds them
// next to the binary or under the unit's compilation directory). Types are
// kept as a graph of nodes indexed by number: a struct that points at
// itself is a node whose member points back at it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::symbols {

struct DwarfType {
  enum class Kind : uint8_t {
    Void,     // void, or a type the reader does not model
    Int,      // integers, char, enums' underlying type
    Bool,     // _Bool / bool
    Float,    // float, double, long double
    Pointer,  // also C++ references (read as the pointer they are)
    Array,    // elem, count (0: flexible or unknown)
    Struct,   // struct and class: members laid out, bases flattened
    Union,    //
    Enum,     // an integer of `size` with names for its values
    Function, // the target of a function pointer
    Typedef,  // elem is what it names
    Const,    // const/volatile/restrict/atomic of elem
  };
  Kind kind = Kind::Void;
  std::string name; // "int", "struct Foo", "enum color", a typedef's name
  uint64_t size = 0;
  bool is_signed = false;
  int elem = -1; // Pointer/Array/Typedef/Const: the node; -1 is void
  uint64_t count = 0;
  bool declaration = false; // a struct declared but not defined here
  bool reference = false;   // a C++ reference (Kind::Pointer)
  struct Member {
    std::string name;
    int type = -1;
    uint64_t offset = 0;   // bytes from the start of the record
    uint32_t bit_size = 0; // bitfields: width, and bits above `offset`
    uint32_t bit_offset = 0;
  };
  std::vector<Member> members;
  std::vector<std::pair<std::string, int64_t>> enumerators;
};

struct DwarfFunction {
  std::string name;    // DW_AT_name ("main", "bar" of ns::Foo::bar)
  std::string linkage; // the mangled name, when there is one
  uint64_t entry = 0;  // the address the function starts at
  struct Param {
    std::string name; // empty for an unnamed parameter
    int type = -1;
    // Where the DWARF says it is at the function's entry address.
    enum class At : uint8_t {
      Other,    // memory, pieces, an expression: not one register
      Register, // dwarf_reg (DWARF numbering)
      Constant, // value (DW_AT_const_value)
      Gone,     // no location covers the entry: optimised out
    };
    At at = At::Other;
    int dwarf_reg = -1;
    int64_t value = 0;
  };
  std::vector<Param> params;
  int ret = -1; // -1: void
  bool variadic = false;
  // DW_CC_nocall: the compiler changed how it is called (arguments
  // removed, constants propagated): the System V slots do not apply, only
  // the parameters' own locations do.
  bool nocall = false;
};

class DwarfTypes {
public:
  // The DWARF of the binary at `path` (see above); an error when there is
  // none, saying where it was looked for.
  static std::unique_ptr<DwarfTypes> open(const std::string &path,
                                          std::string *why = nullptr);
  ~DwarfTypes();
  DwarfTypes(const DwarfTypes &) = delete;
  DwarfTypes &operator=(const DwarfTypes &) = delete;

  // The file the DWARF was read from (the binary or its debug file).
  const std::string &source() const;

  // The defined functions (with an entry address) whose name, linkage name
  // or demangled linkage name is `name`, in DWARF order.
  std::vector<DwarfFunction> functions(std::string_view name) const;
  // Every defined function, for wildcards and listings.
  std::vector<DwarfFunction> all_functions() const;
  // The defined functions that start at `entry` (a symbol's address: an
  // alias such as libc's malloc, whose DWARF name is __libc_malloc).
  std::vector<DwarfFunction> functions_at(uint64_t entry) const;

  // A named type: "struct Foo", "union u", "enum e" or a typedef's name;
  // a defined struct is preferred over a declaration.
  std::optional<int> named_type(std::string_view name) const;

  const DwarfType &type(int index) const;
  // How C spells the type, as bpftrace's -lv prints it: "int", "char**",
  // "const char*", "struct Foo*", "uint64_t".
  std::string spelled(int index) const;
  // The type with typedefs, const and volatile looked through.
  int resolved(int index) const;

  // The addresses of the statements at FILE:LINE (FILE: a path, or a
  // suffix of one after a '/'), lowest first, one per line-table sequence
  // (a line inlined into several places has several); COL 0 means any
  // column.
  std::vector<uint64_t> line_addresses(std::string_view file, uint32_t line,
                                       uint32_t column = 0) const;

private:
  struct Impl;
  explicit DwarfTypes(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ubtrace::runtime::symbols
