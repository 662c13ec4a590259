// Moves into a root of its own as a container runtime does, then runs a
// program there:
//
//   pivoted DIR drop|keep|share PROGRAM ARGS...
//
// A new mount namespace (private); a tmpfs on DIR holding only the loader,
// libc, PROGRAM (as /NAME) and an empty /tmp; pivot_root into it, the old
// root at /old, detached with `drop` (nothing of the host is visible),
// kept with `keep` (as a runtime that has not yet unmounted it), kept with
// `share` and the host's /usr bound on /usr (its libraries visible, as the
// system folders a test harness shares). Prints "pid PID" and execs
// /NAME ARGS (the pid stays). Needs root.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fail(const char *what) {
  perror(what);
  exit(1);
}

static void copy(const char *from, const char *to) {
  int in = open(from, O_RDONLY);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (in < 0 || out < 0)
    fail(from);
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n)
      fail(to);
  close(in);
  close(out);
}

static void at(char *out, size_t size, const char *dir, const char *rest) {
  snprintf(out, size, "%s/%s", dir, rest);
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  const char *dir = argv[1];
  int drop = strcmp(argv[2], "drop") == 0;
  int share = strcmp(argv[2], "share") == 0;
  const char *prog = argv[3];
  const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
  char path[4096];

  if (unshare(CLONE_NEWNS) != 0)
    fail("unshare");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    fail("mount private");
  if (mount("ubtrace-root", dir, "tmpfs", 0, "mode=755") != 0)
    fail("mount tmpfs");
  const char *dirs[] = {"old",   "tmp", "usr",
                        "lib64", "lib", "lib/x86_64-linux-gnu"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    at(path, sizeof path, dir, dirs[i]);
    if (mkdir(path, 0755) != 0)
      fail(path);
  }
  at(path, sizeof path, dir, "tmp");
  chmod(path, 01777);
  at(path, sizeof path, dir, "lib64/ld-linux-x86-64.so.2");
  copy("/lib64/ld-linux-x86-64.so.2", path);
  at(path, sizeof path, dir, "lib/x86_64-linux-gnu/libc.so.6");
  copy("/lib/x86_64-linux-gnu/libc.so.6", path);
  at(path, sizeof path, dir, name);
  copy(prog, path);
  at(path, sizeof path, dir, "usr");
  if (share && mount("/usr", path, NULL, MS_BIND | MS_REC, NULL) != 0)
    fail("bind /usr");

  if (chdir(dir) != 0 || syscall(SYS_pivot_root, ".", "old") != 0 ||
      chdir("/") != 0)
    fail("pivot_root");
  if (drop && umount2("/old", MNT_DETACH) != 0)
    fail("umount /old");
  printf("pid %d\n", getpid());
  fflush(stdout);
  snprintf(path, sizeof path, "/%s", name);
  argv[3] = path;
  execv(path, argv + 3);
  fail("execv");
}
