// Shared by the maps tests: regions, typed helper calls, child processes.
#pragma once

#include "runtime/maps/helpers.h"
#include "runtime/maps/region.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::maps::test {

inline Region make_region(const std::vector<MapLayout> &maps,
                          const RegionOptions &options = {}) {
  auto region = Region::create(maps, options);
  if (!region) {
    std::fprintf(stderr, "Region::create: %s\n", region.error().c_str());
    std::abort();
  }
  return std::move(region).value();
}

inline uint64_t *lookup_u64(void *map, uint64_t key) {
  return static_cast<uint64_t *>(ubt_bpf_map_lookup_elem(map, &key));
}

inline long update_u64(void *map, uint64_t key, uint64_t value,
                       uint64_t flags = 0) {
  return ubt_bpf_map_update_elem(map, &key, &value, flags);
}

inline long delete_u64(void *map, uint64_t key) {
  return ubt_bpf_map_delete_elem(map, &key);
}

// A non-atomic increment, as JIT'd code does it: a load, an add, a store.
// Written with relaxed atomic accesses (the same instructions on x86-64) so
// that the thread sanitizer judges the protocol, not the test.
inline void plain_increment(uint64_t *value) {
  __atomic_store_n(value, __atomic_load_n(value, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
}

// What JIT'd `@[key] = count()` does: look up; on a miss insert 1; on a hit
// increment. Per-slot maps get a plain increment of the thread's own slot,
// as codegen emits it; plain maps need an atomic one.
inline void count_event(void *map, uint64_t key, bool atomic_increment) {
  for (;;) {
    if (uint64_t *value = lookup_u64(map, key)) {
      if (atomic_increment)
        __atomic_fetch_add(value, 1, __ATOMIC_RELAXED);
      else
        plain_increment(value);
      return;
    }
    uint64_t one = 1;
    const long rc = ubt_bpf_map_update_elem(map, &key, &one, 1);
    if (rc != -EEXIST) // inserted, or dropped (counted by the map)
      return;
    // Lost the race to insert: the key exists now, look it up again.
  }
}

// Runs body in a forked child; returns its wait status. The child exits with
// body's result (0 = success) and never returns into gtest.
inline int run_in_child(const std::function<int()> &body) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int code = body();
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

inline pid_t start_child(const std::function<int()> &body) {
  const pid_t pid = fork();
  if (pid == 0)
    _exit(body());
  return pid;
}

// Forks a child that maps the region again (through its descriptor), runs
// `stage` on its own mapping (a non-zero result is its exit code), says so
// on a pipe and then waits to be killed. Returns once the child has said so:
// its pid, or -1 when it never got there.
inline pid_t start_attached_child(const Region &region,
                                  const std::function<int(Region &)> &stage) {
  int ready[2];
  if (pipe(ready) != 0)
    return -1;
  const int fd = region.fd();
  const pid_t child = start_child([&]() -> int {
    auto mine = Region::attach(fd);
    if (!mine)
      return 10;
    if (const int failed = stage(*mine))
      return failed;
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1)
      return 12;
    for (;;)
      pause();
  });
  close(ready[1]);
  char byte;
  const bool got = child > 0 && read(ready[0], &byte, 1) == 1;
  close(ready[0]);
  if (!got && child > 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  return got ? child : -1;
}

inline bool exited_ok(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace ubtrace::runtime::maps::test
