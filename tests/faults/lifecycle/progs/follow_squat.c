// follow_squat N SECONDS: opens N connections to the listener named in
// UBTRACE_FOLLOW (its last word: the socket the tree's exec'd programs
// connect to, public in /proc/net/unix), says nothing on any, and holds
// them SECONDS. Anyone on the machine could; the CLI must go on taking
// the tree's programs meanwhile.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *env = getenv("UBTRACE_FOLLOW");
  const char *address = env ? strrchr(env, ' ') : NULL;
  if (argc != 3 || !address || address[1] != '@') {
    fprintf(stderr, "usage: follow_squat N SECONDS (under ubtrace --follow)\n");
    return 2;
  }
  address++;
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t len = strlen(address);
  if (len >= sizeof addr.sun_path)
    return 2;
  memcpy(addr.sun_path, address, len);
  addr.sun_path[0] = '\0'; // abstract
  int n = atoi(argv[1]), open = 0;
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr,
                           (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                                       len)) == 0)
      open++;
  }
  fprintf(stderr, "follow_squat: %d connections\n", open);
  sleep((unsigned)atoi(argv[2]));
  return 0;
}
