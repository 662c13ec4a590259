/* Started with the agent preloaded and UBTRACE_AGENT_FD naming a descriptor
 * the agent must not take (not the CLI's channel): prints "main" once the
 * agent's constructor has run, then exits 0. */
#include <stdio.h>

int main(void) {
  printf("main\n");
  return 0;
}
