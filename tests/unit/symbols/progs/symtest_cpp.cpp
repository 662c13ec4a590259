// C++ names for the demangling tests: namespaces, a class with overloaded
// members and a static one, templates, overloaded free functions. Prints
// "TAG ADDRESS" lines (TAG without spaces), then waits for EOF.
#include <cstdio>
#include <cstring>

#define PROBED __attribute__((noinline, used))

namespace ubt {
struct Widget {
  PROBED int bar(int x) { return x + value; }
  PROBED int bar(double x) { return static_cast<int>(x) + value; }
  PROBED static int baz() { return 11; }
  int value = 1;
};
template <typename T> PROBED T twice(T v) {
  return v + v;
}
PROBED int over(int x) {
  return x;
}
PROBED int over(const char *s) {
  return static_cast<int>(std::strlen(s));
}
namespace inner {
PROBED int deep(long x) {
  return static_cast<int>(x);
}
} // namespace inner
} // namespace ubt

template <class F> static void *address_of(F f) {
  void *p;
  std::memcpy(&p, &f, sizeof(p)); // a non-virtual member: the code address
  return p;
}

int main() {
  int (ubt::Widget::*bar_int)(int) = &ubt::Widget::bar;
  int (ubt::Widget::*bar_double)(double) = &ubt::Widget::bar;
  int (*over_int)(int) = ubt::over;
  int (*over_str)(const char *) = ubt::over;
  std::printf("Widget::bar(int) %p\n", address_of(bar_int));
  std::printf("Widget::bar(double) %p\n", address_of(bar_double));
  std::printf("Widget::baz %p\n", (void *)&ubt::Widget::baz);
  std::printf("twice<int> %p\n", (void *)&ubt::twice<int>);
  std::printf("twice<double> %p\n", (void *)&ubt::twice<double>);
  std::printf("over(int) %p\n", (void *)over_int);
  std::printf("over(const_char*) %p\n", (void *)over_str);
  std::printf("inner::deep %p\n", (void *)&ubt::inner::deep);
  std::printf("ready\n");
  std::fflush(stdout);
  while (std::getchar() != EOF) {
  }
  ubt::Widget w;
  return w.bar(1) + w.bar(2.0) + ubt::Widget::baz() + ubt::twice(1) +
             static_cast<int>(ubt::twice(1.5)) + ubt::over(1) + ubt::over("x") +
             ubt::inner::deep(1) ==
         0;
}
