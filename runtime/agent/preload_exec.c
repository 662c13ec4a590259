/* Linked into libubtrace_preload.so: the command's own exec is traced, as
 * bpftrace's -c traces the command's pid whatever it execs (`env X=1 app`,
 * `unshare ... app`, `sh -c 'exec app'`, an ASLR-disabling wrapper).
 *
 * The CLI gives the command UBTRACE_FOLLOW=<token> <scope> <filters> <listener>
 * (runtime/agent/protocol.h). Scope `tree` (--follow): the preload keeps
 * its LD_PRELOAD entry and the variable, so every program of the tree
 * gets the agent. Scope `command`: the process that took the -c channel
 * is the command; its preload takes both out of the environment, as
 * without a follow (preload_env.c: its children and what they exec stay
 * clean), keeps them here with its pid as the scope, and puts them back
 * only into an exec this very process makes. The program it becomes then
 * connects (cli_link.cpp) and does the same, so a chain of execs of the
 * command's pid is traced. A fork's exec runs in another pid and passes
 * nothing on; so does posix_spawn (a child).
 *
 * Each interposer calls libc's function of the same name, so that probes
 * on libc's exec functions see the calls they always did. Those given an
 * environment (execve, execvpe, fexecve, execveat) get a copy with both
 * added, built on the stack; those that use `environ` (execv, execvp, and
 * execl and execlp, whose variable arguments only an assembly trampoline
 * can pass on) find `environ` replaced by such a copy (mmap'ed: it stays
 * if the exec fails). The next definitions are looked up at load time:
 * exec may come after vfork, or in a signal handler, where neither malloc
 * nor dlsym may run. execle is not interposed, nor is an exec made with a
 * raw system call or through glibc's internal calls (system() and
 * posix_spawn do, in their child): what it execs runs untraced, and the
 * CLI says so (an exec that did not connect). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;
/* Agent work on the program's thread begins (1) or ends (0): its system
 * calls are not the program's (syscalls.h, OwnCalls). */
extern void ubtrace_agent_own_calls(int begin);

#define UBT_FOLLOW_NAME "UBTRACE_FOLLOW"
#define UBT_TOKEN_HEX 32

typedef int (*ubt_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*ubt_execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*ubt_fexecve_fn)(int, char *const[], char *const[]);
typedef int (*ubt_execveat_fn)(int, const char *, char *const[], char *const[],
                               int);
typedef int (*ubt_execv_fn)(const char *, char *const[]);

static ubt_execve_fn ubt_real_execve;
static ubt_execvpe_fn ubt_real_execvpe;
static ubt_fexecve_fn ubt_real_fexecve;
static ubt_execveat_fn ubt_real_execveat;
static ubt_execv_fn ubt_real_execv, ubt_real_execvp;
/* Read by the trampolines (hidden, not static: named from assembly). */
__attribute__((visibility("hidden"))) void *ubt_real_execl, *ubt_real_execlp;

/* "UBTRACE_FOLLOW=<token> <pid> <filters> <listener>" and "LD_PRELOAD=" this
 * library's path, for the command's own execs; pid 0: none. */
static char ubt_follow[1024];
static char ubt_self[4096];
static pid_t ubt_follow_pid;

void ubtrace_preload_exec_prepare(void) {
  ubt_real_execve = (ubt_execve_fn)dlsym(RTLD_NEXT, "execve");
  ubt_real_execvpe = (ubt_execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
  ubt_real_fexecve = (ubt_fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
  ubt_real_execveat = (ubt_execveat_fn)dlsym(RTLD_NEXT, "execveat");
  ubt_real_execv = (ubt_execv_fn)dlsym(RTLD_NEXT, "execv");
  ubt_real_execvp = (ubt_execv_fn)dlsym(RTLD_NEXT, "execvp");
  ubt_real_execl = dlsym(RTLD_NEXT, "execl");
  ubt_real_execlp = dlsym(RTLD_NEXT, "execlp");
  const char *value = getenv(UBT_FOLLOW_NAME);
  size_t len = value ? strlen(value) : 0;
  if (value && len + sizeof UBT_FOLLOW_NAME + 24 < sizeof ubt_follow)
    memcpy(ubt_follow, value, len + 1);
  Dl_info info;
  if (dladdr((void *)&ubtrace_preload_exec_prepare, &info) && info.dli_fname &&
      strlen(info.dli_fname) < sizeof ubt_self)
    strcpy(ubt_self, info.dli_fname);
}

/* After the agent started (or did not): 1 when the whole tree is
 * followed (the environment stays as it is); 0 when the preload is to
 * leave the environment, the command's own execs keeping what they need
 * here. */
int ubtrace_preload_exec_follow(int started) {
  char value[sizeof ubt_follow];
  memcpy(value, ubt_follow, sizeof value);
  ubt_follow[0] = 0;
  if (!started || strlen(value) < UBT_TOKEN_HEX + 2 || !ubt_self[0])
    return 0; /* (cli_link.cpp has taken a variable that led nowhere) */
  const char *scope = value + UBT_TOKEN_HEX + 1;
  const char *rest = strchr(scope, ' ');
  if (!rest)
    return 0;
  if ((size_t)(rest - scope) == 4 && memcmp(scope, "tree", 4) == 0)
    return 1;
  unsetenv(UBT_FOLLOW_NAME);
  pid_t self = (pid_t)syscall(SYS_getpid);
  char pid[24];
  int n = 0;
  for (pid_t p = self; p; p /= 10)
    pid[n++] = (char)('0' + p % 10);
  char *out = ubt_follow;
  memcpy(out, UBT_FOLLOW_NAME "=", sizeof UBT_FOLLOW_NAME);
  out += sizeof UBT_FOLLOW_NAME;
  memcpy(out, value, UBT_TOKEN_HEX + 1);
  out += UBT_TOKEN_HEX + 1;
  while (n)
    *out++ = pid[--n];
  strcpy(out, rest);
  ubt_follow_pid = self;
  return 0;
}

/* Whether an exec now is the command's own (not a child's: after fork or
 * vfork getpid() is the child's). */
static int ubt_own_exec(void) {
  if (!ubt_follow_pid)
    return 0;
  ubtrace_agent_own_calls(1); /* ubtrace's getpid, not the program's */
  pid_t self = (pid_t)syscall(SYS_getpid);
  ubtrace_agent_own_calls(0);
  return self == ubt_follow_pid;
}

static size_t ubt_count(char *const envp[]) {
  size_t n = 0;
  while (envp && envp[n])
    n++;
  return n;
}

/* The LD_PRELOAD entry of `envp` (NULL: none). */
static const char *ubt_preload_entry(char *const envp[]) {
  for (size_t i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0)
      return envp[i];
  return NULL;
}

/* Room for the LD_PRELOAD entry with this library in it. */
static size_t ubt_preload_size(char *const envp[]) {
  const char *e = ubt_preload_entry(envp);
  return (e ? strlen(e) : 11) + 1 + strlen(ubt_self) + 1;
}

/* `envp` with this library in LD_PRELOAD and the follow variable, into
 * `out` (room for ubt_count(envp) + 3) and `preload` (ubt_preload_size). */
static void ubt_with_agent(char *const envp[], char **out, char *preload) {
  size_t n = 0, self_len = strlen(ubt_self);
  const char *entry = ubt_preload_entry(envp);
  if (!entry || !strstr(entry, ubt_self)) {
    size_t len = entry ? strlen(entry) : 11;
    memcpy(preload, entry ? entry : "LD_PRELOAD=", len);
    if (len > 11)
      preload[len++] = ':';
    memcpy(preload + len, ubt_self, self_len + 1);
  }
  for (size_t i = 0; envp && envp[i]; i++) {
    if (strncmp(envp[i], UBT_FOLLOW_NAME "=", sizeof UBT_FOLLOW_NAME) == 0)
      continue; /* ours replaces it */
    out[n++] = envp[i] == entry && preload[0] ? preload : envp[i];
  }
  if (!entry)
    out[n++] = preload;
  out[n++] = ubt_follow;
  out[n] = NULL;
}

/* The next definition, looked up at load time, or now by a call that came
 * before the constructor (another library's). */
static void *ubt_next(void **slot, const char *name) {
  if (!*slot)
    *slot = dlsym(RTLD_NEXT, name);
  return *slot;
}

static int ubt_missing(void) {
  errno = ENOSYS;
  return -1;
}

/* The agent tells the CLI that the process execs `path` (NULL: unknown)
 * (agent.cpp): its hangup is then known for an exec however soon the
 * program it becomes ends. Only the process whose channel it is says so
 * (not a fork or vfork child). */
extern void ubtrace_agent_exec_notice(const char *path);

/* Returns `call` made with `envp`, with the agent when the exec is the
 * command's own. The arrays are on the stack (variable length: allocated
 * only on that path). */
#define UBT_WITH_AGENT(path, envp, call)                                       \
  do {                                                                         \
    ubtrace_agent_exec_notice(path);                                           \
    if (ubt_own_exec()) {                                                      \
      char *ubt_env[ubt_count(envp) + 3];                                      \
      char ubt_preload[ubt_preload_size(envp)];                                \
      ubt_preload[0] = 0;                                                      \
      ubt_with_agent(envp, ubt_env, ubt_preload);                              \
      char *const *ubt_envp = ubt_env;                                         \
      return call;                                                             \
    }                                                                          \
    char *const *ubt_envp = (envp);                                            \
    return call;                                                               \
  } while (0)

__attribute__((visibility("default"))) int
execve(const char *path, char *const argv[], char *const envp[]) {
  ubt_execve_fn next = ubt_next((void **)&ubt_real_execve, "execve");
  if (!next)
    return ubt_missing();
  UBT_WITH_AGENT(path, envp, next(path, argv, ubt_envp));
}

__attribute__((visibility("default"))) int
execvpe(const char *file, char *const argv[], char *const envp[]) {
  ubt_execvpe_fn next = ubt_next((void **)&ubt_real_execvpe, "execvpe");
  if (!next)
    return ubt_missing();
  UBT_WITH_AGENT(file, envp, next(file, argv, ubt_envp));
}

__attribute__((visibility("default"))) int fexecve(int fd, char *const argv[],
                                                   char *const envp[]) {
  ubt_fexecve_fn next = ubt_next((void **)&ubt_real_fexecve, "fexecve");
  if (!next)
    return ubt_missing();
  UBT_WITH_AGENT(NULL, envp, next(fd, argv, ubt_envp));
}

__attribute__((visibility("default"))) int execveat(int dirfd, const char *path,
                                                    char *const argv[],
                                                    char *const envp[],
                                                    int flags) {
  ubt_execveat_fn next = ubt_next((void **)&ubt_real_execveat, "execveat");
  if (!next)
    return ubt_missing();
  UBT_WITH_AGENT(path, envp, next(dirfd, path, argv, ubt_envp, flags));
}

/* `environ` with the agent, for the exec about to run (the command's own:
 * otherwise nothing changes). */
static void ubt_environ_with_agent_own(const char *path) {
  /* (A call before the constructor, from another library's.) */
  ubt_next(&ubt_real_execl, "execl");
  ubt_next(&ubt_real_execlp, "execlp");
  ubtrace_agent_exec_notice(path);
  if (!ubt_own_exec())
    return;
  char **env = environ;
  size_t slots = (ubt_count(env) + 3) * sizeof(char *);
  size_t need = slots + ubt_preload_size(env);
  void *m = mmap(NULL, need, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return; /* the exec goes on untraced, and is said */
  char *preload = (char *)m + slots;
  preload[0] = 0;
  ubt_with_agent(env, (char **)m, preload);
  environ = (char **)m;
}

__attribute__((visibility("hidden"))) void
ubt_environ_with_agent(const char *path) {
  /* ubtrace's work (its getpid, its mmap), not the program's calls; the
   * exec that follows is the program's. */
  ubtrace_agent_own_calls(1);
  ubt_environ_with_agent_own(path);
  ubtrace_agent_own_calls(0);
}

__attribute__((visibility("default"))) int execv(const char *path,
                                                 char *const argv[]) {
  ubt_execv_fn next = ubt_next((void **)&ubt_real_execv, "execv");
  if (!next)
    return ubt_missing();
  ubt_environ_with_agent(path);
  return next(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char *file,
                                                  char *const argv[]) {
  ubt_execv_fn next = ubt_next((void **)&ubt_real_execvp, "execvp");
  if (!next)
    return ubt_missing();
  ubt_environ_with_agent(file);
  return next(file, argv);
}

/* execl and execlp: the argument registers (and %al, the variadic call's
 * vector count) kept across the call that sets `environ` (given the path,
 * still in %rdi), then a jump to
 * libc's, which finds its arguments where the caller left them. Seven
 * pushes leave the stack 16-byte aligned for the call. */
#define UBT_ENVIRON_TRAMPOLINE(name)                                           \
  __asm__(".pushsection .text\n"                                               \
          ".globl " #name "\n"                                                 \
          ".type " #name ", @function\n"                                       \
          ".p2align 4\n" #name ":\n"                                           \
          "  endbr64\n"                                                        \
          "  push %rdi\n  push %rsi\n  push %rdx\n  push %rcx\n"               \
          "  push %r8\n  push %r9\n  push %rax\n"                              \
          "  call ubt_environ_with_agent\n"                                    \
          "  pop %rax\n  pop %r9\n  pop %r8\n  pop %rcx\n"                     \
          "  pop %rdx\n  pop %rsi\n  pop %rdi\n"                               \
          "  jmp *ubt_real_" #name "(%rip)\n"                                  \
          ".size " #name ", .-" #name "\n"                                     \
          ".popsection\n")
UBT_ENVIRON_TRAMPOLINE(execl);
UBT_ENVIRON_TRAMPOLINE(execlp);
