/* Linked into libubtrace_preload.so. The agent is for the process ubtrace
 * started (-c), not for what that process execs: a shell, make, every
 * compiler it runs would load the agent again, untraced (no channel), only
 * to carry it in memory. So the preload's constructor, before anything of
 * the program's own runs, takes its own entry out of LD_PRELOAD: the user's own
 * entries stay, in their order. The edit is made in place, in the strings
 * and the pointer array the kernel gave the process, so that main()'s
 * envp, which is that array, and every execve that passes it or environ on
 * carry no trace of the agent. (The agent's channel variable is removed by
 * the agent itself, agent.cpp.) Under --follow, which traces what the
 * command's tree execs, the entry stays (preload.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

void ubtrace_preload_forget_self(void);

/* Whether the LD_PRELOAD entry [entry, entry + len) names this library:
 * the very path it was loaded by, or the same file by another path. */
static int names_self(const char *entry, size_t len, const char *self,
                      const struct stat *self_stat) {
  if (strlen(self) == len && memcmp(entry, self, len) == 0)
    return 1;
  char path[4096];
  struct stat st;
  if (!self_stat || len >= sizeof path)
    return 0;
  memcpy(path, entry, len);
  path[len] = 0;
  return stat(path, &st) == 0 && st.st_dev == self_stat->st_dev &&
         st.st_ino == self_stat->st_ino;
}

/* Rewrites the value of one LD_PRELOAD=... string without this library;
 * returns the value's new length. Entries are split on ':' and ' ' as
 * ld.so splits them; a kept entry keeps the separator before it. */
static size_t drop_self(char *value, const char *self,
                        const struct stat *self_stat) {
  char *out = value;
  const char *p = value;
  while (*p) {
    const char *start = p;
    while (*p && *p != ':' && *p != ' ')
      p++;
    size_t len = (size_t)(p - start);
    if (len && !names_self(start, len, self, self_stat)) {
      if (out != value)
        *out++ = start > value ? start[-1] : ':';
      memmove(out, start, len);
      out += len;
    }
    if (*p)
      p++;
  }
  *out = 0;
  return (size_t)(out - value);
}

void ubtrace_preload_forget_self(void) {
  Dl_info info;
  if (!dladdr((void *)&ubtrace_preload_forget_self, &info) || !info.dli_fname)
    return;
  struct stat self_stat;
  int have_stat = stat(info.dli_fname, &self_stat) == 0;
  static const char kName[] = "LD_PRELOAD=";
  for (char **e = environ; e && *e;) {
    if (strncmp(*e, kName, sizeof kName - 1) != 0) {
      e++;
      continue;
    }
    if (drop_self(*e + sizeof kName - 1, info.dli_fname,
                  have_stat ? &self_stat : NULL) != 0) {
      e++;
      continue;
    }
    /* Nothing of the user's left: the variable goes (later ones move up,
     * in the same array). */
    for (char **f = e; (f[0] = f[1]) != NULL; f++)
      ;
  }
}
