// C++ arguments the DWARF tests read: a reference to a class with a base
// class, a scoped enum, a method's `this`, and a template. Built -O2
// without frame pointers; argv[1] rounds (default 1).
#include <cstdio>
#include <cstdlib>

namespace shop {
enum class Kind : short { Book = 3, Pen = 7 };

struct Item {
  int id;
  Kind kind;
};

struct Priced : Item {
  long cents;
  __attribute__((noinline)) long total(int count) const { return cents * count; }
};

template <class T> __attribute__((noinline)) T twice(const T &v) { return v + v; }

__attribute__((noinline)) long inspect(const Priced &p, Kind k) {
  return p.id + static_cast<long>(k) + p.cents;
}
} // namespace shop

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
  shop::Priced pen;
  pen.id = 42;
  pen.kind = shop::Kind::Pen;
  pen.cents = 250;
  long sum = 0;
  for (int i = 0; i < rounds; i++)
    sum += shop::inspect(pen, shop::Kind::Book) + pen.total(2) +
           shop::twice(21L);
  std::printf("sum %ld\n", sum);
  return 0;
}
