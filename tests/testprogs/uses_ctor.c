// A program whose library acts in its initialiser (loader_ctor.c).
#include <stdio.h>
int loader_ctor_loaded(void);
int main(void) {
  printf("main ran: %d\n", loader_ctor_loaded());
  return 0;
}
