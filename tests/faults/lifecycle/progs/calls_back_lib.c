// libcalls_back.so: a library loaded with dlopen that calls back into the
// program (so the program's probes see the library in their stacks) and
// has a checksum function of its own to probe, crc32-like.
__attribute__((noinline)) int lib_calls_back(int (*callback)(int), int x) {
  return callback(x) + 1;
}

__attribute__((noinline)) unsigned lib_checksum(const unsigned char *p, int n) {
  unsigned c = 0xffffffffu;
  for (int i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}
