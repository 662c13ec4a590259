/* Started by the spawn tests: prints what the preloaded test agent did
 * before main, its arguments and environment, then exits with the code
 * given as "exit=N" (default 0). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int (*state)(void) =
      (int (*)(void))dlsym(RTLD_DEFAULT, "ubt_test_agent_state");
  const char *(*token)(void) =
      (const char *(*)(void))dlsym(RTLD_DEFAULT, "ubt_test_agent_token");
  int (*other)(void) =
      (int (*)(void))dlsym(RTLD_DEFAULT, "ubt_preload_other_marker");
  const char *fd = getenv("UBTRACE_AGENT_FD");
  const char *preload = getenv("LD_PRELOAD");
  const char *extra = getenv("UBT_PROBE_VAR");
  printf("pid=%d\n", getpid());
  printf("agent_state=%d\n", state ? state() : -1);
  printf("token=%s\n", token ? token() : "(none)");
  printf("other=%d\n", other ? other() : -1);
  printf("env_fd=%s\n", fd ? fd : "(unset)");
  printf("preload=%s\n", preload ? preload : "(unset)");
  printf("var=%s\n", extra ? extra : "(unset)");
  int code = 0;
  for (int i = 0; i < argc; ++i) {
    printf("argv[%d]=[%s]\n", i, argv[i]);
    if (i > 0 && strncmp(argv[i], "exit=", 5) == 0)
      code = atoi(argv[i] + 5);
  }
  fflush(stdout);
  return code;
}
