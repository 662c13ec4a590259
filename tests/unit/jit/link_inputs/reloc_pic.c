/* Linked by the JIT's own linker (elf_link) as position-independent code,
 * and compiled into the test binary as usual, so both can be compared. Made
 * to need: PLT32 calls to external functions, GOTPCRELX loads of external
 * data and of an external function's address, PC32 references to .rodata
 * (string literals, constant pools, a jump table). No writable data: images
 * are mapped read-only. */
extern long link_ext_add(long a, long b);
extern const long link_ext_value;
typedef long (*binop)(long, long);
extern long link_ext_apply(binop f, long a, long b);

static const char kText[] = "relocations all the way down";

long pic_calls(long x) { return link_ext_add(x, 3) + link_ext_value; }

long pic_callback(long x) { return link_ext_apply(link_ext_add, x, x * 2); }

long pic_switch(long x) {
  switch (x & 15) {
  case 0: return x * 3;
  case 1: return x ^ 0x55;
  case 2: return x + 1000;
  case 3: return x >> 3;
  case 4: return ~x;
  case 5: return x * x;
  case 6: return x | 0xf0f0;
  case 7: return x - 77;
  case 8: return x << 5;
  case 9: return x & 0xabcdef;
  default: return x;
  }
}

long pic_strings(long x) {
  long h = x;
  for (unsigned i = 0; i < sizeof(kText); i++)
    h = h * 31 + kText[i];
  return h;
}

long pic_vectors(long x) {
  long v[8] = {1, 22, 333, 4444, 55555, 666666, 7777777, 88888888};
  long s = 0;
  for (int i = 0; i < 8; i++)
    s += v[i] * (x + i);
  return s;
}
