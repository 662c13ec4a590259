#include "runtime/hook/code_buffer.h"

namespace ubtrace::runtime::hook::x86 {
namespace {

uint8_t low3(Reg r) {
  return static_cast<uint8_t>(r) & 7;
}
bool high(Reg r) {
  return static_cast<uint8_t>(r) >= 8;
}

// REX.W with R (modrm.reg) and B (modrm.rm / base) extensions.
void rex_w(CodeBuffer &c, Reg reg, Reg rm) {
  c.u8(0x48 | (high(reg) ? 4 : 0) | (high(rm) ? 1 : 0));
}

// ModRM (and SIB) for [base+disp32], with `reg` in the reg field.
void mem_disp32(CodeBuffer &c, uint8_t reg, Reg base, int32_t disp) {
  c.u8(0x80 | ((reg & 7) << 3) | low3(base));
  if (low3(base) == 4) // rsp/r12 need a SIB byte
    c.u8(0x24);
  c.u32(static_cast<uint32_t>(disp));
}

// A REX prefix for 32-bit and byte operations, only when an operand needs
// one (r8-r15).
void rex_if_high(CodeBuffer &c, Reg reg, Reg rm) {
  if (high(reg) || high(rm))
    c.u8(0x40 | (high(reg) ? 4 : 0) | (high(rm) ? 1 : 0));
}

// ModRM + SIB for fs:[disp32] (no base, no index), `reg` in the reg field.
void fs_absolute(CodeBuffer &c, uint8_t reg, int32_t disp) {
  c.u8(0x04 | ((reg & 7) << 3));
  c.u8(0x25);
  c.u32(static_cast<uint32_t>(disp));
}

} // namespace

void load_fs(CodeBuffer &c, Reg dst, int32_t disp) {
  c.u8(0x64);
  rex_w(c, dst, Reg::Rax);
  c.u8(0x8B);
  fs_absolute(c, static_cast<uint8_t>(dst), disp);
}

void cmp_fs_byte_zero(CodeBuffer &c, int32_t disp) {
  c.u8(0x64);
  c.u8(0x80);
  fs_absolute(c, 7, disp);
  c.u8(0);
}

void load32_from(CodeBuffer &c, Reg dst, Reg base, int32_t disp) {
  rex_if_high(c, dst, base);
  c.u8(0x8B);
  mem_disp32(c, static_cast<uint8_t>(dst), base, disp);
}

void load_u8_from(CodeBuffer &c, Reg dst, Reg base, int32_t disp) {
  rex_if_high(c, dst, base);
  c.u8(0x0F);
  c.u8(0xB6);
  mem_disp32(c, static_cast<uint8_t>(dst), base, disp);
}

void add_mem_imm8(CodeBuffer &c, int width, Reg base, int32_t disp, int8_t v) {
  if (width == 64)
    rex_w(c, Reg::Rax, base);
  else
    rex_if_high(c, Reg::Rax, base);
  c.u8(0x83);
  mem_disp32(c, 0, base, disp);
  c.u8(static_cast<uint8_t>(v));
}

void cmp_mem_zero(CodeBuffer &c, Reg base, int32_t disp) {
  rex_w(c, Reg::Rax, base);
  c.u8(0x83);
  mem_disp32(c, 7, base, disp);
  c.u8(0);
}

void test_low8_imm(CodeBuffer &c, Reg r, uint8_t v) {
  if (static_cast<uint8_t>(r) > 3) { // spl..dil and r8b.. need a REX prefix
    c.fail();
    return;
  }
  c.u8(0xF6);
  c.u8(0xC0 | low3(r));
  c.u8(v);
}

void cmp32_imm8(CodeBuffer &c, Reg r, int8_t v) {
  rex_if_high(c, Reg::Rax, r);
  c.u8(0x83);
  c.u8(0xF8 | low3(r));
  c.u8(static_cast<uint8_t>(v));
}

void shl32_imm(CodeBuffer &c, Reg r, uint8_t n) {
  rex_if_high(c, Reg::Rax, r);
  c.u8(0xC1);
  c.u8(0xE0 | low3(r));
  c.u8(n);
}

void add64(CodeBuffer &c, Reg dst, Reg src) {
  rex_w(c, src, dst);
  c.u8(0x01);
  c.u8(0xC0 | (low3(src) << 3) | low3(dst));
}

void sub64(CodeBuffer &c, Reg dst, Reg src) {
  rex_w(c, src, dst);
  c.u8(0x29);
  c.u8(0xC0 | (low3(src) << 3) | low3(dst));
}

void mov32(CodeBuffer &c, Reg dst, Reg src) {
  rex_if_high(c, src, dst);
  c.u8(0x89);
  c.u8(0xC0 | (low3(src) << 3) | low3(dst));
}

void lea_indexed(CodeBuffer &c, Reg dst, Reg base, Reg index, uint8_t scale,
                 int32_t disp) {
  uint8_t ss = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
  if (index == Reg::Rsp || (1u << ss) != scale) {
    c.fail();
    return;
  }
  c.u8(0x48 | (high(dst) ? 4 : 0) | (high(index) ? 2 : 0) |
       (high(base) ? 1 : 0));
  c.u8(0x8D);
  c.u8(0x84 | (low3(dst) << 3)); // mod 10: disp32, rm 100: SIB
  c.u8(static_cast<uint8_t>((ss << 6) | (low3(index) << 3) | low3(base)));
  c.u32(static_cast<uint32_t>(disp));
}

size_t jcc_near_forward(CodeBuffer &c, uint8_t cc) {
  c.u8(0x0F);
  c.u8(0x80 | (cc & 0xF));
  c.u32(0);
  return c.size() - 4;
}

size_t jmp_near_forward(CodeBuffer &c) {
  c.u8(0xE9);
  c.u32(0);
  return c.size() - 4;
}

void push(CodeBuffer &c, Reg r) {
  if (high(r))
    c.u8(0x41);
  c.u8(0x50 + low3(r));
}

void pop(CodeBuffer &c, Reg r) {
  if (high(r))
    c.u8(0x41);
  c.u8(0x58 + low3(r));
}

void push_imm(CodeBuffer &c, int32_t v) {
  if (v >= -128 && v <= 127) {
    c.u8(0x6A);
    c.u8(static_cast<uint8_t>(v));
    return;
  }
  c.u8(0x68);
  c.u32(static_cast<uint32_t>(v));
}

void pushfq(CodeBuffer &c) {
  c.u8(0x9C);
}
void popfq(CodeBuffer &c) {
  c.u8(0x9D);
}

void cld(CodeBuffer &c) {
  c.u8(0xFC);
}

void restore_flags_from(CodeBuffer &c, int32_t disp) {
  load_from(c, Reg::Rcx, Reg::Rsp, disp);
  const uint8_t code[] = {
      0x0F, 0xBA, 0xE1, 0x0A, // bt ecx, 10 (DF)
      0x73, 0x01,             // jnc +1
      0xFD,                   // std
      0x89, 0xC8,             // mov eax, ecx
      0xC1, 0xE8, 0x0B,       // shr eax, 11
      0x83, 0xE0, 0x01,       // and eax, 1: al = OF
      0x04, 0x7F,             // add al, 0x7f: sets OF exactly when al was 1
      0x88, 0xCC,             // mov ah, cl
      0x9E,                   // sahf: SF ZF AF PF CF (OF untouched)
  };
  c.bytes(code, sizeof code);
}

void lea_rsp(CodeBuffer &c, int32_t disp) {
  lea_from_rsp(c, Reg::Rsp, disp);
}

void lea_from_rsp(CodeBuffer &c, Reg dst, int32_t disp) {
  lea_from(c, dst, Reg::Rsp, disp);
}

void lea_from(CodeBuffer &c, Reg dst, Reg base, int32_t disp) {
  rex_w(c, dst, base);
  c.u8(0x8D);
  mem_disp32(c, static_cast<uint8_t>(dst), base, disp);
}

void store_rsp(CodeBuffer &c, int32_t disp, Reg src) {
  store_to(c, Reg::Rsp, disp, src);
}

void load_from(CodeBuffer &c, Reg dst, Reg base, int32_t disp) {
  rex_w(c, dst, base);
  c.u8(0x8B);
  mem_disp32(c, static_cast<uint8_t>(dst), base, disp);
}

void store_to(CodeBuffer &c, Reg base, int32_t disp, Reg src) {
  rex_w(c, src, base);
  c.u8(0x89);
  mem_disp32(c, static_cast<uint8_t>(src), base, disp);
}

void mov(CodeBuffer &c, Reg dst, Reg src) {
  rex_w(c, src, dst);
  c.u8(0x89);
  c.u8(0xC0 | (low3(src) << 3) | low3(dst));
}

void mov_imm64(CodeBuffer &c, Reg dst, uint64_t v) {
  c.u8(0x48 | (high(dst) ? 1 : 0));
  c.u8(0xB8 + low3(dst));
  c.u64(v);
}

void mov_imm32(CodeBuffer &c, Reg dst, uint32_t v) {
  if (high(dst))
    c.u8(0x41);
  c.u8(0xB8 + low3(dst));
  c.u32(v);
}

void xor32(CodeBuffer &c, Reg r) {
  if (high(r))
    c.u8(0x45);
  c.u8(0x31);
  c.u8(0xC0 | (low3(r) << 3) | low3(r));
}

void test64(CodeBuffer &c, Reg a, Reg b) {
  rex_w(c, b, a);
  c.u8(0x85);
  c.u8(0xC0 | (low3(b) << 3) | low3(a));
}

void and_rsp_imm8(CodeBuffer &c, int8_t v) {
  c.u8(0x48);
  c.u8(0x83);
  c.u8(0xE4);
  c.u8(static_cast<uint8_t>(v));
}

void sub_rsp_imm32(CodeBuffer &c, int32_t v) {
  c.u8(0x48);
  c.u8(0x81);
  c.u8(0xEC);
  c.u32(static_cast<uint32_t>(v));
}

void call(CodeBuffer &c, Reg r) {
  if (high(r))
    c.u8(0x41);
  c.u8(0xFF);
  c.u8(0xD0 | low3(r));
}

void call_rsp(CodeBuffer &c, int8_t disp) {
  const uint8_t code[] = {0xFF, 0x54, 0x24, static_cast<uint8_t>(disp)};
  c.bytes(code, sizeof code);
}

void jmp_rsp(CodeBuffer &c, int8_t disp) {
  const uint8_t code[] = {0xFF, 0x64, 0x24, static_cast<uint8_t>(disp)};
  c.bytes(code, sizeof code);
}

void ret(CodeBuffer &c) {
  c.u8(0xC3);
}

void cmovz(CodeBuffer &c, Reg dst, Reg src) {
  rex_w(c, dst, src);
  c.u8(0x0F);
  c.u8(0x44);
  c.u8(0xC0 | (low3(dst) << 3) | low3(src));
}

void push_rip_qword(CodeBuffer &c, uint64_t literal_addr) {
  c.u8(0xFF);
  c.u8(0x35);
  c.u32(static_cast<uint32_t>(literal_addr - (c.here() + 4)));
}

void jmp(CodeBuffer &c, uint64_t target) {
  if (fits_rel32(target, c.here() + 5)) {
    c.u8(0xE9);
    c.u32(static_cast<uint32_t>(target - (c.here() + 4)));
    return;
  }
  c.u8(0xFF);
  c.u8(0x25);
  c.u32(0);
  c.u64(target);
}

void jcc(CodeBuffer &c, uint8_t cc, uint64_t target) {
  if (fits_rel32(target, c.here() + 6)) {
    c.u8(0x0F);
    c.u8(0x80 | (cc & 0xF));
    c.u32(static_cast<uint32_t>(target - (c.here() + 4)));
    return;
  }
  c.u8(0x70 | ((cc ^ 1) & 0xF)); // skip the 14-byte absolute jump
  c.u8(14);
  c.u8(0xFF);
  c.u8(0x25);
  c.u32(0);
  c.u64(target);
}

void bind_near(CodeBuffer &c, size_t rel32_offset) {
  c.patch_u32(rel32_offset,
              static_cast<uint32_t>(c.size() - (rel32_offset + 4)));
}

size_t jz_short_forward(CodeBuffer &c) {
  c.u8(0x74);
  c.u8(0);
  return c.size() - 1;
}

void bind_short(CodeBuffer &c, size_t rel8_offset) {
  size_t distance = c.size() - (rel8_offset + 1);
  if (distance > 127) {
    c.fail();
    return;
  }
  c.patch_u8(rel8_offset, static_cast<uint8_t>(distance));
}

namespace {
void vector_move(CodeBuffer &c, int width, int n, int32_t disp, bool store) {
  uint8_t opcode = store ? 0x7F : 0x6F;
  switch (width) {
  case 0: // movdqu xmm: F3 0F 6F/7F
    c.u8(0xF3);
    c.u8(0x0F);
    break;
  case 1: // vmovdqu ymm: VEX.256.F3.0F 6F/7F (2-byte VEX, R=vvvv=1s)
    c.u8(0xC5);
    c.u8(0xFE);
    break;
  default: // vmovdqu64 zmm: EVEX.512.F3.0F.W1 6F/7F
    c.u8(0x62);
    c.u8(0xF1);
    c.u8(0xFE);
    c.u8(0x48);
    break;
  }
  c.u8(opcode);
  mem_disp32(c, static_cast<uint8_t>(n), Reg::Rsp, disp);
}
} // namespace

void store_vector(CodeBuffer &c, int width, int n, int32_t disp) {
  vector_move(c, width, n, disp, true);
}

void load_vector(CodeBuffer &c, int width, int n, int32_t disp) {
  vector_move(c, width, n, disp, false);
}

void xsavec64_rsp(CodeBuffer &c) {
  const uint8_t code[] = {0x48, 0x0F, 0xC7, 0x24, 0x24};
  c.bytes(code, sizeof code);
}
void xsave64_rsp(CodeBuffer &c) {
  const uint8_t code[] = {0x48, 0x0F, 0xAE, 0x24, 0x24};
  c.bytes(code, sizeof code);
}
void xrstor64_rsp(CodeBuffer &c) {
  const uint8_t code[] = {0x48, 0x0F, 0xAE, 0x2C, 0x24};
  c.bytes(code, sizeof code);
}
void fxsave64_rsp(CodeBuffer &c) {
  const uint8_t code[] = {0x48, 0x0F, 0xAE, 0x04, 0x24};
  c.bytes(code, sizeof code);
}
void fxrstor64_rsp(CodeBuffer &c) {
  const uint8_t code[] = {0x48, 0x0F, 0xAE, 0x0C, 0x24};
  c.bytes(code, sizeof code);
}

} // namespace ubtrace::runtime::hook::x86
