// Programs that make the agent lose probe hits in each way it counts
// (runtime/agent/agent_counters.h), a known number of times:
//
//   loses_hits nested N       calls probed(i) N times; a SIGUSR1 handler
//                             calls probed(-1) (the script raises SIGUSR1
//                             from its probe on probed: every handler's hit
//                             is nested in that probe's run)
//   loses_hits recurse DEPTH  recurse(DEPTH): DEPTH nested calls, returns
//                             past the 64 the shadow stack holds
//   loses_hits threads N      N threads alive at once, each calling
//                             probed(i) once (past the hook state pool, and
//                             past the region's thread slots)
//   loses_hits busy N         calls busy_loop(i) N times (an interpreted
//                             probe that runs past its instruction budget)
//   loses_hits recurse-loop DEPTH
//                             recurse(DEPTH) every millisecond until killed,
//                             probed(i) after each (for -p: a long-running
//                             target that loses hits all the time)
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int probed(int i) {
  __asm__ volatile("" : : "r"(i) : "memory");
  return i;
}

__attribute__((noinline)) int recurse(int depth) {
  __asm__ volatile("" : : "r"(depth) : "memory");
  return depth <= 1 ? 1 : 1 + recurse(depth - 1);
}

__attribute__((noinline)) int busy_loop(int i) {
  __asm__ volatile("" : : "r"(i) : "memory");
  return i;
}

static void on_usr1(int sig) {
  (void)sig;
  probed(-1);
}

static pthread_barrier_t g_all_alive, g_all_done;

static void *thread_main(void *arg) {
  pthread_barrier_wait(&g_all_alive);
  probed((int)(long)arg);
  pthread_barrier_wait(&g_all_done);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int n = atoi(argv[2]);
  if (!strcmp(argv[1], "nested")) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < n; i++)
      probed(i);
  } else if (!strcmp(argv[1], "recurse")) {
    printf("depth %d\n", recurse(n));
  } else if (!strcmp(argv[1], "threads")) {
    pthread_barrier_init(&g_all_alive, NULL, (unsigned)n);
    pthread_barrier_init(&g_all_done, NULL, (unsigned)n + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    for (int i = 0; i < n; i++)
      if (pthread_create(&threads[i], &attr, thread_main, (void *)(long)i) !=
          0) {
        printf("cannot create thread %d\n", i);
        return 1;
      }
    pthread_barrier_wait(&g_all_done);
    for (int i = 0; i < n; i++)
      pthread_join(threads[i], NULL);
    printf("threads %d\n", n);
  } else if (!strcmp(argv[1], "recurse-loop")) {
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (int i = 0;; i++) {
      recurse(n);
      probed(i);
      usleep(1000);
    }
  } else if (!strcmp(argv[1], "busy")) {
    for (int i = 0; i < n; i++)
      busy_loop(i);
  } else {
    return 2;
  }
  return 0;
}
