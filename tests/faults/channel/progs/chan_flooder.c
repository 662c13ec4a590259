/* A traced program that writes on the agent's channel itself (it owns the
 * descriptor table: the agent's socket is one of its descriptors): forged
 * messages as fast as it can, Library notices naming libraries that do not
 * exist, replies nobody asked for, messages with descriptors attached. The
 * CLI must keep control (end on SIGTERM) and not fill its descriptor table.
 *
 *   chan_flooder
 * Prints "flooding <fd>" once 2000 messages carrying a descriptor went
 * through (sends block until the CLI reads them), then floods until killed,
 * calling chan_work() now and then. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

volatile unsigned long g_sum;
__attribute__((noinline)) void chan_work(unsigned long i) {
  g_sum += i;
}

static int foreign_socket(void) {
  DIR *d = opendir("/proc/self/fd");
  int found = -1;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    int fd = atoi(e->d_name);
    struct stat st;
    if (e->d_name[0] != '.' && fd >= 3 && fd != dirfd(d) &&
        fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && fd > found)
      found = fd;
  }
  if (d)
    closedir(d);
  return found;
}

/* Sent whole or not at all; blocking, so that every one reaches the CLI. */
static int forge(int sock, uint32_t type, const void *payload, uint32_t size,
                 int pass_fd) {
  char buf[512];
  uint32_t header[2] = {type, size};
  memcpy(buf, header, 8);
  memcpy(buf + 8, payload, size);
  struct iovec iov = {buf, 8 + size};
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))] = {0};
  if (pass_fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) > 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  chan_work(1);
  int sock = foreign_socket();
  if (sock < 0) {
    printf("no agent socket\n");
    return 3;
  }
  unsigned long with_fds = 0;
  /* A test that fails leaves no flooder behind: it ends with ubtrace. */
  const pid_t parent = getppid();
  for (unsigned long n = 0; getppid() == parent; ++n) {
    char path[64];
    int len = snprintf(path, sizeof path, "/nonexistent/libflood%lu.so", n);
    with_fds += forge(sock, 3 /* Library */, path, (uint32_t)len, 0);
    uint64_t garbage[3] = {n, ~0ull, n * 7};
    forge(sock, 2 /* Reply */, garbage, sizeof garbage, -1);
    with_fds += forge(sock, (uint32_t)n, garbage, (uint32_t)(n % 24), 1);
    if (with_fds >= 2000 && with_fds < 2002)
      printf("flooding %d\n", sock);
    if (n % 64 == 0)
      chan_work(n);
  }
  return 0;
}
