/* Calls the agent's inject entry itself, as the injector would: dlopen()s
 * the agent (argv[1]), prints "ready <pid>", reads the entry's argument as
 * one line on stdin, calls ubtrace_agent_inject() with it, prints
 * "entry <result>", then waits for stdin to close and prints "done". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2)
    return 2;
  void *agent = dlopen(argv[1], RTLD_NOW);
  if (!agent) {
    printf("dlopen %s\n", dlerror());
    return 3;
  }
  int (*entry)(const char *) =
      (int (*)(const char *))dlsym(agent, "ubtrace_agent_inject");
  if (!entry) {
    printf("no entry\n");
    return 4;
  }
  printf("ready %d\n", getpid());
  char line[4096];
  if (!fgets(line, sizeof line, stdin))
    return 5;
  line[strcspn(line, "\n")] = '\0';
  printf("entry %d\n", entry(line));
  while (fgets(line, sizeof line, stdin))
    ;
  printf("done\n");
  return 0;
}
