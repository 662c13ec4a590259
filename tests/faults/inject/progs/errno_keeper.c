/* A thread that sets errno and checks all the time that it keeps it: the
 * injector, running dlopen or pthread_create on a borrowed thread, must
 * give the thread its errno back. Prints "ready tid=T"; on "q" from stdin
 * prints "errno kept" or "errno changed to E", exits 0 or 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int g_stop, g_tid, g_seen;

static void *keeper(void *arg) {
  (void)arg;
  g_tid = gettid();
  errno = 1234;
  while (!g_stop) {
    int now = errno;
    if (now != 1234 && !g_seen)
      g_seen = now;
  }
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  pthread_t thread;
  pthread_create(&thread, NULL, keeper, NULL);
  while (!g_tid)
    usleep(1000);
  printf("ready tid=%d\n", g_tid);
  char line[8];
  while (read(0, line, sizeof line) > 0 && line[0] != 'q')
    ;
  g_stop = 1;
  pthread_join(thread, NULL);
  if (g_seen)
    printf("errno changed to %d\n", g_seen);
  else
    printf("errno kept\n");
  return g_seen ? 1 : 0;
}
