// A daemon that confines itself: chroot(ROOT), optionally drops its
// privileges to nobody (as daemons do after chroot), then dlopens LIB (a
// path inside ROOT) and calls lib_checksum three times.
//
//   chrooted ROOT LIB [drop] [start FILE]
//
// With `start FILE`, it prints "started" and waits for FILE first, before
// it confines itself: ubtrace -p attaches to it there.
#include <dlfcn.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef unsigned (*checksum_fn)(const unsigned char *, int);

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int drop = 0;
  const char *start = NULL;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "drop"))
      drop = 1;
    else if (!strcmp(argv[i], "start") && i + 1 < argc)
      start = argv[++i];
  }
  if (start) {
    printf("started\n");
    fflush(stdout);
    while (access(start, F_OK) != 0)
      usleep(1000);
  }
  if (chroot(argv[1]) != 0 || chdir("/") != 0) {
    perror("chroot");
    return 1;
  }
  if (drop &&
      (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
    perror("drop");
    return 1;
  }
  void *h = dlopen(argv[2], RTLD_NOW);
  if (!h) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  checksum_fn f = (checksum_fn)dlsym(h, "lib_checksum");
  unsigned c = 0;
  for (int i = 0; i < 3; i++)
    c += f((const unsigned char *)"abc", 3);
  printf("checksums %08x uid %d\n", c, (int)getuid());
  return 0;
}
