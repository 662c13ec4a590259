// CodeBuffer: machine code being assembled for a known final address, and
// the handful of x86-64 instruction encoders the trampolines need. Fixed
// capacity, no allocation; an overflow is remembered and checked once by the
// caller (ok()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ubtrace::runtime::hook {

// Register numbers as the encoding uses them (REX.B/R extend to r8-r15).
enum class Reg : uint8_t {
  Rax = 0,
  Rcx,
  Rdx,
  Rbx,
  Rsp,
  Rbp,
  Rsi,
  Rdi,
  R8,
  R9,
  R10,
  R11,
  R12,
  R13,
  R14,
  R15,
};

class CodeBuffer {
public:
  static constexpr size_t kCapacity = 2048;

  // `base` is the address the first byte will have once copied into place.
  explicit CodeBuffer(uint64_t base) : base_(base) {}

  uint64_t base() const { return base_; }
  size_t size() const { return size_; }
  uint64_t here() const { return base_ + size_; }
  const uint8_t *data() const { return bytes_; }
  bool ok() const { return !overflow_; }

  void u8(uint8_t b) {
    if (size_ == kCapacity) {
      overflow_ = true;
      return;
    }
    bytes_[size_++] = b;
  }
  void bytes(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; ++i)
      u8(p[i]);
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  // Overwrites 4 bytes already emitted (a displacement fixed up later).
  void patch_u32(size_t offset, uint32_t v) {
    if (offset + 4 > size_)
      return;
    for (int i = 0; i < 4; ++i)
      bytes_[offset + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  void patch_u8(size_t offset, uint8_t v) {
    if (offset < size_)
      bytes_[offset] = v;
  }
  // Marks the buffer unusable (an encoding that could not be produced).
  void fail() { overflow_ = true; }
  void align(size_t alignment, uint8_t fill) {
    while (here() % alignment != 0 && ok())
      u8(fill);
  }

private:
  uint64_t base_;
  size_t size_ = 0;
  bool overflow_ = false;
  uint8_t bytes_[kCapacity];
};

// Whether `target` is reachable by a rel32 from an instruction ending at
// `next_ip`.
inline bool fits_rel32(uint64_t target, uint64_t next_ip) {
  int64_t d = static_cast<int64_t>(target - next_ip);
  return d >= INT32_MIN && d <= INT32_MAX;
}

// The encoders. Each emits one instruction; the comment is its assembly.
namespace x86 {

void push(CodeBuffer &c, Reg r);         // push r
void pop(CodeBuffer &c, Reg r);          // pop r
void push_imm(CodeBuffer &c, int32_t v); // push imm (sign-extended)
void pushfq(CodeBuffer &c);              // pushfq
void popfq(CodeBuffer &c);               // popfq
void cld(CodeBuffer &c);                 // cld
// Sets the arithmetic flags (OF SF ZF AF PF CF) and DF from the rflags
// value at [rsp+disp], clobbering rax and rcx: far cheaper than popfq,
// which is microcoded.
void restore_flags_from(CodeBuffer &c, int32_t disp);
void lea_rsp(CodeBuffer &c, int32_t disp);               // lea rsp, [rsp+disp]
void lea_from_rsp(CodeBuffer &c, Reg dst, int32_t disp); // lea dst, [rsp+disp]
void lea_from(CodeBuffer &c, Reg dst, Reg base,
              int32_t disp);                          // lea dst, [base+disp]
void store_rsp(CodeBuffer &c, int32_t disp, Reg src); // mov [rsp+disp], src
void load_from(CodeBuffer &c, Reg dst, Reg base,
               int32_t disp); // mov dst, [base+disp]
void store_to(CodeBuffer &c, Reg base, int32_t disp,
              Reg src);                             // mov [base+disp], src
void mov(CodeBuffer &c, Reg dst, Reg src);          // mov dst, src (64-bit)
void mov_imm64(CodeBuffer &c, Reg dst, uint64_t v); // mov dst, imm64
void mov_imm32(CodeBuffer &c, Reg dst,
               uint32_t v);                   // mov dst32, imm32 (zero-extends)
void xor32(CodeBuffer &c, Reg r);             // xor r32, r32
void test64(CodeBuffer &c, Reg a, Reg b);     // test a, b
void and_rsp_imm8(CodeBuffer &c, int8_t v);   // and rsp, imm8
void sub_rsp_imm32(CodeBuffer &c, int32_t v); // sub rsp, imm32
void call(CodeBuffer &c, Reg r);              // call r
void call_rsp(CodeBuffer &c, int8_t disp);    // call qword [rsp+disp]
void jmp_rsp(CodeBuffer &c, int8_t disp);     // jmp qword [rsp+disp]
void ret(CodeBuffer &c);                      // ret
void cmovz(CodeBuffer &c, Reg dst, Reg src);  // cmovz dst, src (64-bit)
void push_rip_qword(CodeBuffer &c,
                    uint64_t literal_addr); // push qword [rip+..]
// jmp to target: rel32 when in reach, else jmp [rip+0] followed by the
// 8-byte address.
void jmp(CodeBuffer &c, uint64_t target);
// jcc to target (cc is the low nibble of the 0x7x opcode): rel32 when in
// reach, else the inverted short jcc over an absolute jmp.
void jcc(CodeBuffer &c, uint8_t cc, uint64_t target);
// Forward short jump whose rel8 is patched later; returns the rel8 offset.
size_t jz_short_forward(CodeBuffer &c);             // jz rel8
void bind_short(CodeBuffer &c, size_t rel8_offset); // target = here
void bind_near(CodeBuffer &c, size_t rel32_offset); // target = here (rel32)
// What the lean return entry (trampoline.cpp) needs besides the above.
void load_fs(CodeBuffer &c, Reg dst, int32_t disp); // mov dst, fs:[disp]
void cmp_fs_byte_zero(CodeBuffer &c, int32_t disp); // cmp byte fs:[disp], 0
void load32_from(CodeBuffer &c, Reg dst, Reg base,
                 int32_t disp); // mov dst32, dword [base+disp]
void load_u8_from(CodeBuffer &c, Reg dst, Reg base,
                  int32_t disp); // movzx dst32, byte [base+disp]
// add dword or qword (width 32 or 64) [base+disp], v
void add_mem_imm8(CodeBuffer &c, int width, Reg base, int32_t disp, int8_t v);
void test_low8_imm(CodeBuffer &c, Reg r, uint8_t v); // test al|cl|dl|bl, v
void cmp_mem_zero(CodeBuffer &c, Reg base,
                  int32_t disp);                 // cmp qword [base+disp], 0
void cmp32_imm8(CodeBuffer &c, Reg r, int8_t v); // cmp r32, v
void shl32_imm(CodeBuffer &c, Reg r, uint8_t n); // shl r32, n
void add64(CodeBuffer &c, Reg dst, Reg src);     // add dst, src
void sub64(CodeBuffer &c, Reg dst, Reg src);     // sub dst, src
void mov32(CodeBuffer &c, Reg dst, Reg src);     // mov dst32, src32
// lea dst, [base + index*scale + disp] (scale 1, 2, 4 or 8; index not rsp)
void lea_indexed(CodeBuffer &c, Reg dst, Reg base, Reg index, uint8_t scale,
                 int32_t disp);
// Forward near jcc / jmp whose rel32 bind_near patches; return its offset.
size_t jcc_near_forward(CodeBuffer &c, uint8_t cc);
size_t jmp_near_forward(CodeBuffer &c);
// Moves vector register n (0-7) of the given width (0: xmm movdqu, 1: ymm
// vmovdqu, 2: zmm vmovdqu64) to or from [rsp+disp].
void store_vector(CodeBuffer &c, int width, int n, int32_t disp);
void load_vector(CodeBuffer &c, int width, int n, int32_t disp);
// XSAVE family with [rsp] as the operand, 64-bit forms.
void xsavec64_rsp(CodeBuffer &c);
void xsave64_rsp(CodeBuffer &c);
void xrstor64_rsp(CodeBuffer &c);
void fxsave64_rsp(CodeBuffer &c);
void fxrstor64_rsp(CodeBuffer &c);

} // namespace x86
} // namespace ubtrace::runtime::hook
