// Call frame information (.eh_frame, .debug_frame) compiled into compact
// rows for unwinding x86-64 user stacks without frame pointers.
//
// A module's CFI is a program per function (the FDE, after its CIE's
// initial instructions) that says, address by address, how to find the
// caller's frame: the canonical frame address (CFA) as a register plus an
// offset, and where registers were saved relative to it. Interpreting it
// on every stack walk is slow and needs care no probe can afford, so it
// is run once, off the probe path, into one row per address range:
//
//   CFA = rsp or rbp + cfa_offset; the return address at CFA - 8;
//   rbp saved at CFA + rbp_offset, or unchanged.
//
// That is what compilers emit for x86-64 code almost everywhere. What does
// not fit (a CFA computed by an expression, as PLT entries and signal
// trampolines have; a return address saved elsewhere) is a row of kind
// Unsupported, and an address in no FDE is outside every row: the walker
// falls back to frame pointers there. A row of kind End says the stack
// ends (the return address is undefined: _start, clone's child).
//
// Parsing trusts nothing: every read is bounds-checked against the
// section, so a truncated or hostile .eh_frame gives fewer rows, never a
// read out of bounds. No exceptions (the agent may link this).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::runtime::unwind {

enum class CfaRule : uint8_t {
  Rsp,         // CFA = rsp + cfa_offset
  Rbp,         // CFA = rbp + cfa_offset
  End,         // the return address is undefined: the outermost frame
  Unsupported, // not expressible as a row: fall back to frame pointers
};

enum class RbpRule : uint8_t {
  Same,   // rbp is unchanged in the caller
  Offset, // the caller's rbp is at CFA + rbp_offset
};

struct CfiRow {
  uint64_t start = 0; // the first address (the module's own vaddr)
  int32_t cfa_offset = 0;
  int16_t rbp_offset = 0;
  CfaRule cfa = CfaRule::Unsupported;
  RbpRule rbp = RbpRule::Same;
};
static_assert(sizeof(CfiRow) == 16);

// A module's rows sorted by start; a row covers up to the next one's
// start. After the last address of an FDE that no other FDE continues, an
// Unsupported row closes the range.
struct CfiTable {
  std::vector<CfiRow> rows;
  size_t fdes = 0;         // FDEs read
  size_t bad_entries = 0;  // CIEs/FDEs skipped as malformed
  size_t complex_rows = 0; // rows the format cannot express (Unsupported)
};

// Where a CFI section's bytes lie: `data` holds `size` bytes that the
// module loads at `vaddr` (pc-relative pointers are relative to it).
struct CfiSection {
  const uint8_t *data = nullptr;
  size_t size = 0;
  uint64_t vaddr = 0;
  bool debug_frame = false; // .debug_frame's CIE ids and offsets
};

// Appends the rows of `section` to `table` (sorting and closing the
// ranges is done by finish()).
void add_cfi_rows(const CfiSection &section, CfiTable &table);
// Sorts the rows, drops duplicates (the first FDE read wins: pass
// .eh_frame before .debug_frame) and closes the ranges.
void finish_cfi_table(CfiTable &table);

// The row that applies at `addr`, or nullptr when no FDE covers it.
// Probe-safe: a binary search over plain memory, no allocation.
const CfiRow *find_cfi_row(const CfiRow *rows, size_t count, uint64_t addr);

// How a row reads, for messages and tests: "cfa=rsp+8 rbp=same".
std::string describe(const CfiRow &row);

} // namespace ubtrace::runtime::unwind
