/* The library LD_PRELOAD names (and -p injection dlopens): it only starts
 * the agent, from a constructor that runs after every initialiser of
 * libubtrace_agent.so, its dependency. */
#include "loader_mark.h" /* this folder: no include path here */

extern int ubtrace_agent_start(void);
extern void ubtrace_preload_forget_self(void);  /* preload_env.c */
extern void ubtrace_preload_exec_prepare(void); /* preload_exec.c */
extern int ubtrace_preload_exec_follow(int started);
extern void ubtrace_agent_own_calls(int begin);

/* This library's first initialiser: where the CLI stops following the
 * command's loader (loader_mark.h). What the program's libraries did so
 * far the CLI saw; from here to the session's start all is ubtrace's, and
 * after it the agent traces. No libc: its syscall() is this library's. */
__attribute__((constructor(101))) static void
ubtrace_preload_loader_done(void) {
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(39L /* getpid */), "D"(UBT_LOADER_DONE_MARK)
                   : "rcx", "r11", "memory");
  (void)ret;
}

__attribute__((constructor)) static void ubtrace_preload_init(void) {
  /* All of this is ubtrace's work, not the program's: its system calls
   * are not traced (the session's start turns dispatch on meanwhile). */
  ubtrace_agent_own_calls(1);
  /* What the command's own execs need, before the agent takes it. */
  ubtrace_preload_exec_prepare();
  /* The agent of a spawned target waits for Go in there. */
  int started = ubtrace_agent_start();
  /* Then, unless the trace follows the whole tree (--follow), what the
   * program's children exec must not load the agent again. */
  if (!ubtrace_preload_exec_follow(started))
    ubtrace_preload_forget_self();
  ubtrace_agent_own_calls(0);
}
