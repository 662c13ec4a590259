/* Statically linked: LD_PRELOAD cannot reach it, and it maps no glibc. */
#include <unistd.h>
int main(void) {
  pause();
  return 0;
}
