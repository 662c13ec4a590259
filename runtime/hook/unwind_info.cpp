#include "runtime/hook/unwind_info.h"

#include "runtime/hook/return_stubs.h"
#include "runtime/hook/thread_pool.h"

#include <cstddef>
#include <unwind.h>

extern "C" void __register_frame(void *begin); // libgcc

namespace ubtrace::runtime::hook {
namespace {

// DWARF constants (DWARF 4, sections 6.4 and 2.5).
enum : uint8_t {
  DW_CFA_advance_loc = 0x40,
  DW_CFA_def_cfa = 0x0c,
  DW_CFA_val_expression = 0x16,
  DW_CFA_nop = 0x00,
  DW_OP_addr = 0x03,
  DW_OP_deref = 0x06,
  DW_OP_constu = 0x10,
  DW_OP_dup = 0x12,
  DW_OP_drop = 0x13,
  DW_OP_pick = 0x15,
  DW_OP_minus = 0x1c,
  DW_OP_mul = 0x1e,
  DW_OP_plus = 0x22,
  DW_OP_plus_uconst = 0x23,
  DW_OP_bra = 0x28,
  DW_OP_eq = 0x29,
  DW_OP_skip = 0x2f,
  DW_OP_lit0 = 0x30,
  DW_OP_deref_size = 0x94,
  DW_EH_PE_absptr = 0x00,
};
constexpr uint8_t kDwarfRsp = 7;
constexpr uint8_t kDwarfReturnAddress = 16;

// The stub frame's CFA is rsp + 1, not rsp: the unwinder identifies a frame
// by its callee's CFA, and with rsp + 0 the stub frame and the caller would
// share one identity (the hooked function's CFA), so phase 2 of a throw
// would take the stub for the catching frame. rsp + 1 collides with no real
// frame (CFAs of ABI-conforming frames are 8-byte aligned). The caller's rsp
// is then given explicitly as CFA - 1.
constexpr uint8_t kCfaBias = 1;

class Bytes {
public:
  explicit Bytes(std::vector<uint8_t> &out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) {
    u8(static_cast<uint8_t>(v));
    u8(static_cast<uint8_t>(v >> 8));
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      u8(v ? (b | 0x80) : b);
    } while (v);
  }
  void sleb(int64_t v) {
    for (;;) {
      uint8_t b = v & 0x7f;
      v >>= 7;
      bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
      u8(done ? b : (b | 0x80));
      if (done)
        return;
    }
  }
  size_t size() const { return out_.size(); }
  void patch_u16(size_t at, uint16_t v) {
    out_[at] = static_cast<uint8_t>(v);
    out_[at + 1] = static_cast<uint8_t>(v >> 8);
  }
  void patch_u32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }

private:
  std::vector<uint8_t> &out_;
};

// A forward or backward DW_OP_bra/DW_OP_skip: the offset counts from the end
// of its 2-byte operand.
struct BranchFixup {
  size_t operand_at;
};
void bind(Bytes &b, BranchFixup f, size_t target) {
  b.patch_u16(f.operand_at,
              static_cast<uint16_t>(static_cast<int64_t>(target) -
                                    static_cast<int64_t>(f.operand_at + 2)));
}
BranchFixup branch(Bytes &b, uint8_t op) {
  b.u8(op);
  size_t at = b.size();
  b.u16(0);
  return {at};
}

// The expression for shadow index k (see the header). Stack on entry: CFA.
// The CFA stays at the bottom: libgcc's DW_OP_pick refuses to pick the
// bottom element.
std::vector<uint8_t> return_address_expression(uint32_t k) {
  std::vector<uint8_t> out;
  Bytes b(out);
  const ThreadPool &pool = g_thread_pool;
  uint64_t entry0 = reinterpret_cast<uint64_t>(pool.states) + kShadowOffset +
                    uint64_t{k} * sizeof(ShadowEntry);
  b.u8(DW_OP_dup);
  b.u8(DW_OP_lit0 + kCfaBias + 8);
  b.u8(DW_OP_minus); // [cfa, slot]
  b.u8(DW_OP_addr);
  b.u64(reinterpret_cast<uint64_t>(&pool.high_water));
  b.u8(DW_OP_deref_size);
  b.u8(4); // [cfa, slot, n]
  size_t loop = b.size();
  b.u8(DW_OP_dup);
  BranchFixup to_body = branch(b, DW_OP_bra);
  BranchFixup to_end_empty = branch(b, DW_OP_skip); // n == 0: yields 0
  bind(b, to_body, b.size());
  b.u8(DW_OP_lit0 + 1);
  b.u8(DW_OP_minus); // [cfa, slot, i]
  b.u8(DW_OP_dup);
  b.u8(DW_OP_constu);
  b.uleb(sizeof(ThreadState));
  b.u8(DW_OP_mul);
  b.u8(DW_OP_addr);
  b.u64(entry0);
  b.u8(DW_OP_plus); // [cfa, slot, i, &entry]
  b.u8(DW_OP_dup);
  b.u8(DW_OP_deref); // [cfa, slot, i, &entry, entry.slot]
  b.u8(DW_OP_pick);
  b.u8(3);
  b.u8(DW_OP_eq);
  BranchFixup to_found = branch(b, DW_OP_bra);
  b.u8(DW_OP_drop); // [cfa, slot, i]
  BranchFixup to_loop = branch(b, DW_OP_skip);
  bind(b, to_loop, loop);
  bind(b, to_found, b.size());
  b.u8(DW_OP_plus_uconst);
  b.uleb(offsetof(ShadowEntry, return_address));
  b.u8(DW_OP_deref); // [cfa, slot, i, return address]
  bind(b, to_end_empty, b.size());
  return out;
}

} // namespace

// Pops the shadow entries of the frames an exception (or a forced unwind)
// leaves through: the stub frame for index k means entries k and up are
// gone.
extern "C" _Unwind_Reason_Code
ubt_hook_return_personality(int, _Unwind_Action actions,
                            _Unwind_Exception_Class, _Unwind_Exception *,
                            _Unwind_Context *context) {
  if (!(actions & _UA_CLEANUP_PHASE))
    return _URC_CONTINUE_UNWIND;
  int64_t k = stub_index(_Unwind_GetIP(context));
  ThreadState *ts = t_thread_state;
  if (k >= 0 && ts && static_cast<uint32_t>(k) < ts->depth) {
    ts->unwound_entries += ts->depth - static_cast<uint32_t>(k);
    ts->depth = static_cast<uint32_t>(k);
    release_if_transient(ts);
  }
  return _URC_CONTINUE_UNWIND;
}

std::vector<uint8_t> build_return_eh_frame(uint64_t stubs,
                                           uint32_t stub_bytes) {
  std::vector<uint8_t> out;
  Bytes b(out);

  // CIE
  size_t cie = b.size();
  b.u32(0); // length, patched
  b.u32(0); // CIE id
  b.u8(1);  // version
  for (char ch : {'z', 'P', 'R', '\0'})
    b.u8(static_cast<uint8_t>(ch));
  b.uleb(1);  // code alignment
  b.sleb(-8); // data alignment
  b.u8(kDwarfReturnAddress);
  b.uleb(1 + 8 + 1); // augmentation data: P (encoding + pointer), R
  b.u8(DW_EH_PE_absptr);
  b.u64(reinterpret_cast<uint64_t>(&ubt_hook_return_personality));
  b.u8(DW_EH_PE_absptr);
  b.u8(DW_CFA_def_cfa);
  b.uleb(kDwarfRsp);
  b.uleb(kCfaBias);
  b.u8(DW_CFA_val_expression); // caller's rsp = CFA - bias
  b.uleb(kDwarfRsp);
  b.uleb(2);
  b.u8(DW_OP_lit0 + kCfaBias);
  b.u8(DW_OP_minus);
  while ((b.size() - cie) % 8)
    b.u8(DW_CFA_nop);
  b.patch_u32(cie, static_cast<uint32_t>(b.size() - cie - 4));

  // FDE: from one byte before the first stub (return address - 1 lookups)
  size_t fde = b.size();
  b.u32(0);                                     // length, patched
  b.u32(static_cast<uint32_t>(b.size() - cie)); // back to the CIE
  b.u64(stubs - 1);
  b.u64(stub_bytes);
  b.uleb(0); // no augmentation data (no LSDA)
  uint32_t rows = stub_bytes / kStubStride;
  for (uint32_t row = 0; row < rows; ++row) {
    if (row > 0)
      b.u8(DW_CFA_advance_loc | kStubStride);
    std::vector<uint8_t> expr = return_address_expression(row % kShadowDepth);
    b.u8(DW_CFA_val_expression);
    b.uleb(kDwarfReturnAddress);
    b.uleb(expr.size());
    for (uint8_t v : expr)
      b.u8(v);
  }
  while ((b.size() - fde) % 8)
    b.u8(DW_CFA_nop);
  b.patch_u32(fde, static_cast<uint32_t>(b.size() - fde - 4));
  b.u32(0); // terminator
  return out;
}

Result<void> register_return_unwind_info(uint64_t stubs, uint32_t stub_bytes) {
  static std::vector<uint8_t> *registered = nullptr; // lives forever
  if (registered)
    return {};
  if (!g_thread_pool.states)
    return make_error("unwind info needs the thread-state pool");
  registered =
      new std::vector<uint8_t>(build_return_eh_frame(stubs, stub_bytes));
  __register_frame(registered->data());
  return {};
}

} // namespace ubtrace::runtime::hook
