/* A daemon that takes every descriptor it did not open, as daemons do, and
 * then checks that its own sockets carry only its own bytes.
 *
 *   chan_closer MODE LIB [wait]
 *     MODE all:   close_range(3, ~0U), then socketpairs until the table is
 *                 full (every number from 3 to the limit is its own socket)
 *     MODE exact: finds the one socket it did not make (the agent's
 *                 channel), closes it and dup2()s its own socket there
 *     wait:       reads a line on stdin first (a -p test attaches meanwhile)
 *
 * Before and after: chan_work() calls (probed); after: dlopen(LIB) and
 * chan_lib_fn() (a pending probe: the agent reports the load), then every
 * pair exchanges a known message both ways, nothing else may be waiting on
 * either end, now and after a second (the agent notices within one). Prints
 * "clean <pairs>" or "dirty: ..." and "done", exits 0 (1 if dirty). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile unsigned long g_sum;
__attribute__((noinline)) void chan_work(unsigned long i) {
  g_sum += i;
}

#define MAX_PAIRS 70000
static int g_pairs[MAX_PAIRS][2];
static int g_npairs;
static int g_dirty;

static void work(int n) {
  for (int i = 0; i < n; ++i)
    chan_work((unsigned long)i);
}

static void take_all(void) {
  syscall(SYS_close_range, 3u, ~0u, 0u);
  while (g_npairs < MAX_PAIRS) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
      break; /* EMFILE: every number is ours */
    g_pairs[g_npairs][0] = sv[0];
    g_pairs[g_npairs][1] = sv[1];
    g_npairs++;
  }
}

static int not_mine_socket(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  int dfd = dirfd(d), found = -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd < 3 || fd == dfd)
      continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && fd > found)
      found = fd;
  }
  closedir(d);
  return found;
}

static void take_exact(void) {
  int theirs = not_mine_socket();
  if (theirs < 0) {
    printf("no foreign socket\n");
    return;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    exit(3);
  close(theirs);
  if (dup2(sv[0], theirs) < 0)
    exit(4);
  close(sv[0]);
  g_pairs[0][0] = theirs;
  g_pairs[0][1] = sv[1];
  g_npairs = 1;
  printf("took %d\n", theirs);
}

static void expect_nothing(int fd, const char *when) {
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
  if (n > 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    printf("dirty: fd %d %s: %s\n", fd, when,
           n > 0 ? "stray bytes" : strerror(errno));
    g_dirty = 1;
  }
}

static void exchange(int a, int b) {
  char msg[64], got[64];
  int len = snprintf(msg, sizeof msg, "pair %d->%d", a, b);
  if (send(a, msg, (size_t)len, MSG_NOSIGNAL) != len) {
    printf("dirty: send on %d: %s\n", a, strerror(errno));
    g_dirty = 1;
    return;
  }
  ssize_t n = recv(b, got, sizeof got, MSG_DONTWAIT);
  if (n != len || memcmp(got, msg, (size_t)len) != 0) {
    printf("dirty: %d read %zd bytes, not its own %d\n", b, n, len);
    g_dirty = 1;
  }
}

static void check_pairs(const char *when) {
  for (int i = 0; i < g_npairs; ++i) {
    expect_nothing(g_pairs[i][0], when);
    expect_nothing(g_pairs[i][1], when);
  }
  for (int i = 0; i < g_npairs; ++i) {
    exchange(g_pairs[i][0], g_pairs[i][1]);
    exchange(g_pairs[i][1], g_pairs[i][0]);
  }
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 3)
    return 2;
  printf("ready %d\n", getpid());
  if (argc > 3) {
    char line[64];
    if (!fgets(line, sizeof line, stdin))
      return 5;
  }
  work(100);
  /* stdout stays open: it is the test's pipe (0-2 are never taken). */
  if (strcmp(argv[1], "all") == 0)
    take_all();
  else
    take_exact();
  /* With the table full, dlopen cannot open the library: free one pair. */
  if (strcmp(argv[1], "all") == 0 && g_npairs > 0) {
    g_npairs--;
    close(g_pairs[g_npairs][0]);
    close(g_pairs[g_npairs][1]);
  }
  work(100);
  void *lib = dlopen(argv[2], RTLD_NOW);
  if (!lib) {
    printf("dlopen: %s\n", dlerror());
  } else {
    int (*fn)(int) = (int (*)(int))dlsym(lib, "chan_lib_fn");
    if (fn)
      fn(1);
  }
  check_pairs("after dlopen");
  sleep(2); /* the agent notices within a second */
  work(100);
  check_pairs("later");
  printf(g_dirty ? "dirty pairs %d\n" : "clean %d\n", g_npairs);
  printf("done\n");
  return g_dirty;
}
