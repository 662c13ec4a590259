// A library whose initialiser acts while the program's loader runs,
// before ubtrace's own initialisers (it is the program's dependency, so
// the loader initialises it first): system calls the -c command makes
// before its agent runs (runtime/inject/loader_calls.h). What it does is
// told by the environment:
//   UBT_CTOR_OPEN=PATH    opens PATH (and closes it)
//   UBT_CTOR_SIGNAL=1     raises SIGUSR1 at a handler of its own, and
//                         says whether the handler ran
//   UBT_CTOR_EXEC=PATH    execs PATH (once: the variable is dropped)
//   UBT_CTOR_FORK=PATH    forks; the child opens PATH and leaves with
//                         _exit(0), the parent waits for it
//   UBT_CTOR_CLOSEFDS=1   closes every descriptor above 2
//   UBT_CTOR_SYSTEM=CMD   runs CMD with system(), after the above
//   UBT_CTOR_THREAD=PATH  starts a thread that opens PATH once main has
//                         begun (loader_ctor_loaded() waits for it)
//   UBT_CTOR_EXIT=N       leaves with _exit(N) before main
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig) { handled = sig; }

static pthread_t g_thread;
static int g_threaded;
static volatile int g_main_began;

static void *thread_opens(void *path) {
  while (!g_main_began)
    usleep(1000);
  int fd = open((const char *)path, O_RDONLY);
  if (fd >= 0)
    close(fd);
  return NULL;
}

__attribute__((constructor)) static void loader_ctor_init(void) {
  const char *path = getenv("UBT_CTOR_OPEN");
  if (path) {
    int fd = open(path, O_RDONLY);
    if (fd >= 0)
      close(fd);
  }
  if (getenv("UBT_CTOR_SIGNAL")) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    printf("initialiser's handler ran: %s\n",
           handled == SIGUSR1 ? "yes" : "no");
    fflush(stdout);
  }
  const char *forked = getenv("UBT_CTOR_FORK");
  if (forked) {
    pid_t child = fork();
    if (child == 0) {
      int fd = open(forked, O_RDONLY);
      if (fd >= 0)
        close(fd);
      _exit(0);
    }
    if (child > 0)
      waitpid(child, NULL, 0);
  }
  if (getenv("UBT_CTOR_CLOSEFDS"))
    for (int fd = 3; fd < 1024; fd++)
      close(fd);
  const char *command = getenv("UBT_CTOR_SYSTEM");
  if (command) {
    int status = system(command);
    printf("system: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
  }
  const char *threaded = getenv("UBT_CTOR_THREAD");
  if (threaded)
    g_threaded =
        pthread_create(&g_thread, NULL, thread_opens, (void *)threaded) == 0;
  const char *leave = getenv("UBT_CTOR_EXIT");
  if (leave)
    _exit(atoi(leave));
  const char *exec = getenv("UBT_CTOR_EXEC");
  if (exec) {
    unsetenv("UBT_CTOR_EXEC");
    char *argv[] = {(char *)exec, NULL};
    execv(exec, argv);
    perror("execv");
  }
}

int loader_ctor_loaded(void) {
  g_main_began = 1;
  if (g_threaded)
    pthread_join(g_thread, NULL);
  return 1;
}
