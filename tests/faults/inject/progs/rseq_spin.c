/* A thread that lives in a restartable sequence's critical section
 * (rseq_spin_loop.S), for the test that the injector never borrows such a
 * thread: changing its rip makes the kernel forget the section, and
 * putting rip back would let it run on unaborted. Prints "ready tid=T
 * start=S end=E" (the section's [S, E), hex);
 * on "q" from stdin it stops the spinner and prints "aborts=N broken=B";
 * exits 0 unless the section was broken. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <unistd.h>

void ubt_rseq_spin(struct rseq *rs, struct rseq_cs *cs, volatile int *stop,
                   volatile long *aborts, volatile int *broken);

static volatile int g_stop, g_broken, g_tid;
static volatile long g_aborts;
static struct rseq_cs g_cs __attribute__((aligned(32)));

static void *spinner(void *arg) {
  (void)arg;
  g_tid = gettid();
  struct rseq *rs =
      (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  ubt_rseq_spin(rs, &g_cs, &g_stop, &g_aborts, &g_broken);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (__rseq_size == 0) {
    printf("no rseq\n");
    return 77;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, spinner, NULL);
  while (!g_tid || !g_cs.abort_ip)
    usleep(1000);
  printf("ready tid=%d start=%llx end=%llx\n", g_tid,
         (unsigned long long)g_cs.start_ip,
         (unsigned long long)(g_cs.start_ip + g_cs.post_commit_offset));
  char line[8];
  while (read(0, line, sizeof line) > 0 && line[0] != 'q')
    ;
  g_stop = 1;
  pthread_join(thread, NULL);
  printf("aborts=%ld broken=%d\n", g_aborts, g_broken);
  return g_broken ? 1 : 0;
}
