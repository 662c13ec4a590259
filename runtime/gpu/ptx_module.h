// A PTX module as the rewriter needs it: the header directives, every
// module-scope item with its text range and names, and for each function
// its parameters, where its body's code starts and where it returns. Views
// into the text; nothing is re-printed, so edits keep the module byte for
// byte elsewhere.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace ubtrace::runtime::gpu {

struct PtxParam {
  std::string_view name;
  std::string_view space;  // ".param" (or ".reg" in .func lists)
  std::string_view type;   // ".u32", ".f32", ".b8", ".texref", ...
  uint32_t align = 0;      // .align N, 0 when absent
  uint32_t array_size = 0; // [N]; 0 for a scalar
  bool is_array() const { return array_size != 0; }
};

enum class PtxLinkage : uint8_t { Internal, Visible, Weak, Extern, Common };

// A `ret` or `exit` in a function body.
struct PtxExit {
  size_t offset = 0;       // start of the statement, guard included
  std::string_view guard;  // "@%p1", "@!%p2", or empty
  std::string_view opcode; // "ret", "ret.uni", "exit"
  int depth = 1;           // block nesting: 1 = the body itself
};

struct PtxFunction {
  bool is_entry = false; // .entry (a kernel) or .func
  PtxLinkage linkage = PtxLinkage::Internal;
  std::string_view name;
  std::vector<PtxParam> params;
  std::vector<PtxParam> returns; // .func (.param .b32 r) name(...)
  size_t begin = 0, end = 0;     // the whole definition or declaration
  bool has_body = false;
  size_t body_open = 0;  // offset of the body's `{`
  size_t body_close = 0; // offset of the body's `}`
  // Where code starts: the first statement of the body that is not a
  // declaration (.reg/.local/.shared/.param/.pragma/.loc): an instruction,
  // a label, or a nested block.
  size_t code_begin = 0;
  std::vector<PtxExit> exits;
};

enum class PtxItemKind : uint8_t {
  Version,     // .version
  Target,      // .target
  AddressSize, // .address_size
  File,        // .file
  Section,     // .section NAME { ... } (debug info)
  Function,    // .entry / .func, definition or prototype
  Variable,    // .global/.const/.shared/... declaration
  Other,       // .pragma, .alias, ... (kept as they are)
};

struct PtxItem {
  PtxItemKind kind = PtxItemKind::Other;
  size_t begin = 0, end = 0;           // text range (no surrounding whitespace)
  std::vector<std::string_view> names; // symbols it declares
  bool is_extern = false;
  int function = -1; // index into PtxModule::functions
};

struct PtxModule {
  std::string_view text;
  uint32_t version_major = 0, version_minor = 0;
  size_t version_begin = 0, version_end = 0; // the "9.0" token
  std::vector<std::string_view> target;      // "sm_90", "debug", ...
  size_t target_begin = 0, target_end = 0;   // from first to last word
  uint32_t address_size = 0;
  size_t header_end = 0; // end of the last .version/.target/.address_size
  std::vector<PtxItem> items;
  std::vector<PtxFunction> functions;

  const PtxFunction *find_function(std::string_view name) const;
  // The SM number of the target ("sm_90a" -> 90), 0 if none.
  uint32_t target_sm() const;
};

// Parses nvcc/NVVM/hand-written PTX. Fails with the offending line number
// on text it cannot delimit (unbalanced braces, a missing `;`, a function
// without a name).
Result<PtxModule> parse_ptx(std::string_view text);

// 1-based line number of `offset` in `text`, for messages.
size_t ptx_line_of(std::string_view text, size_t offset);

} // namespace ubtrace::runtime::gpu
