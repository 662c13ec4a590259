// A shared library with exported functions, linked or dlopen'ed.
__attribute__((noinline)) int ubtest_square(int x) { return x * x; }
__attribute__((noinline)) int ubtest_sum(int a, int b) { return a + b; }
