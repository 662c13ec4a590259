/* Where the -c command's loader phase ends (C and C++: the preload's
 * constructor makes the call, runtime/inject/loader_calls.h watches for it).
 *
 * The system calls a spawned command makes before the agent runs (the
 * dynamic loader's, and its libraries' initialisers') reach no agent; the
 * CLI follows them with ptrace instead, until the first of ubtrace's own
 * initialisers makes getpid(UBT_LOADER_DONE_MARK): getpid ignores its
 * argument, and a program that calls it so by chance would end the
 * following early and lose nothing but what came before. */
#ifndef UBTRACE_AGENT_LOADER_MARK_H
#define UBTRACE_AGENT_LOADER_MARK_H

/* "ubtrload" in ASCII. */
#define UBT_LOADER_DONE_MARK 0x756274726c6f6164L
/* Around calls that ubtrace's initialisers make before that (the agent
 * library's first one, runtime/agent/first_init.cpp): the CLI leaves out
 * what comes between. */
#define UBT_LOADER_OWN_BEGIN_MARK 0x756274726f776e31L /* "ubtrown1" */
#define UBT_LOADER_OWN_END_MARK 0x756274726f776e30L   /* "ubtrown0" */

#endif
