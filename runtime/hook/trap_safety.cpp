#include "runtime/hook/trap_safety.h"

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>

namespace ubtrace::runtime::hook {
namespace {

// SigBlk of one thread; false when it cannot be read (the thread exited).
bool blocked_mask(const char *tid, uint64_t &mask) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
  FILE *f = fopen(path, "re");
  if (!f)
    return false;
  char line[256];
  bool found = false;
  while (!found && fgets(line, sizeof line, f))
    if (strncmp(line, "SigBlk:", 7) == 0)
      found = sscanf(line + 7, "%" SCNx64, &mask) == 1;
  fclose(f);
  return found;
}

} // namespace

TrapBlocker find_trap_blocker() {
  TrapBlocker none;
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return none;
  TrapBlocker found;
  while (struct dirent *e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    uint64_t mask = 0;
    if (!blocked_mask(e->d_name, mask))
      continue;
    if (mask & (uint64_t{1} << (SIGTRAP - 1))) {
      found.tid = atoi(e->d_name);
      break;
    }
  }
  closedir(dir);
  return found;
}

std::string describe(const TrapBlocker &blocker) {
  return "thread " + std::to_string(blocker.tid) + " blocks SIGTRAP";
}

} // namespace ubtrace::runtime::hook
