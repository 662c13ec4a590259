// C++ names: namespaces, overloads, templates, methods.
#include <cstdio>

namespace outer {
namespace inner {
struct Widget {
  __attribute__((noinline)) int size(int scale) const { return 3 * scale; }
};
__attribute__((noinline)) int helper(int x) { return x + 1; }
__attribute__((noinline)) int helper(long x) { return static_cast<int>(x) + 2; }
} // namespace inner
template <class T> __attribute__((noinline)) T twice(T v) { return v + v; }
} // namespace outer

int main() {
  outer::inner::Widget w;
  int s = w.size(2) + outer::inner::helper(1) + outer::inner::helper(1L) +
          outer::twice(4) + static_cast<int>(outer::twice(1.5));
  std::printf("sum %d\n", s);
  return 0;
}
