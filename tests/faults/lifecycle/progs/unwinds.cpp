// unwinds N: throws N C++ exceptions through thrower(), a function whose
// return is probed: its frame is unwound, the return never happens.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" __attribute__((noinline)) int thrower(int i) {
  if (i >= 0)
    throw std::runtime_error("unwound");
  return i;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 10;
  int caught = 0;
  for (int i = 0; i < n; i++) {
    try {
      thrower(i);
    } catch (const std::exception &) {
      caught++;
    }
  }
  std::printf("caught %d\n", caught);
  return thrower(-1) == -1 ? 0 : 1;
}
