/* The library LD_PRELOAD names (and -p injection dlopens): it only starts
 * the agent, from a constructor that runs after every initialiser of
 * libubtrace_agent.so, its dependency. */
extern int ubtrace_agent_start(void);
extern void ubtrace_preload_forget_self(void); /* preload_env.c */

__attribute__((constructor)) static void ubtrace_preload_init(void) {
  /* The agent of a spawned target waits for Go in there. Then, unless the
   * trace follows the command's tree (--follow), what the program execs
   * must not load the agent again. */
  if (!ubtrace_agent_start())
    ubtrace_preload_forget_self();
}
