/* The library LD_PRELOAD names (and -p injection dlopens): it only starts
 * the agent, from a constructor that runs after every initialiser of
 * libubtrace_agent.so, its dependency. */
extern void ubtrace_agent_start(void);
extern void ubtrace_preload_forget_self(void); /* preload_env.c */

__attribute__((constructor)) static void ubtrace_preload_init(void) {
  /* First: the agent of a spawned target waits for Go in there. */
  ubtrace_preload_forget_self();
  ubtrace_agent_start();
}
