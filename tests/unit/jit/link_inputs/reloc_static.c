/* Like reloc_pic.c, compiled -fno-pic: function pointer tables in .rodata
 * (R_X86_64_64), absolute 32-bit addresses (R_X86_64_32S), calls (PLT32).
 * Links only below 2 GiB. */
extern long link_ext_add(long a, long b);
typedef long (*unop)(long);
extern long link_ext_apply(long (*f)(long, long), long a, long b);

static long twice(long x) { return link_ext_add(x, x); }
static long square(long x) { return x * x; }
static long negate(long x) { return -x; }
static unop const kTable[3] = {twice, square, negate};

long static_table(long x) {
  unop f = kTable[(unsigned long)x % 3];
  return f(x) + 1;
}

static long add_local(long a, long b) { return a + b * 2; }

/* The address of a local function as a 32-bit immediate. */
long static_address_of(long x) { return link_ext_apply(add_local, x, 5); }
