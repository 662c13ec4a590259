/* The library LD_PRELOAD names (and -p injection dlopens): it only starts
 * the agent, from a constructor that runs after every initialiser of
 * libubtrace_agent.so, its dependency. */
extern void ubtrace_agent_start(void);

__attribute__((constructor)) static void ubtrace_preload_init(void) {
  ubtrace_agent_start();
}
