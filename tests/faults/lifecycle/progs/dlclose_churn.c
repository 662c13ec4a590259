// dlopen/dlclose churn: a library whose functions are probed is loaded,
// called and unloaded again and again.
//
//   dlclose_churn rounds N LIB         N rounds of dlopen, lib_checksum(),
//                                      dlclose
//   dlclose_churn moving N LIB         the same, but each unload leaves
//                                      the library's old place taken, so
//                                      the next load lands elsewhere;
//                                      prints how many places it used
//   dlclose_churn race N LIB OTHER     a thread keeps LIB loaded (its own
//                                      handle) and calls LIB's checksum
//                                      20000 times, while the main thread
//                                      runs N rounds on OTHER (a copy) and
//                                      opens and closes LIB too (never
//                                      unloading it)
//   dlclose_churn held N LIB GO END    loads LIB and prints "loaded" (for
//                                      ubtrace -p to attach), waits for
//                                      the file GO, runs N rounds of
//                                      call, dlclose, dlopen; unloads LIB
//                                      for good, takes its old place and
//                                      prints "unloaded", waits for the
//                                      file END, prints "done"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef unsigned (*checksum_fn)(const unsigned char *, int);

static const unsigned char kData[] = "the quick brown fox";

static unsigned round_trip(const char *lib, uintptr_t *base, size_t *size) {
  void *h = dlopen(lib, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(1);
  }
  checksum_fn f = (checksum_fn)dlsym(h, "lib_checksum");
  unsigned c = f(kData, (int)sizeof kData);
  if (base) {
    struct link_map *map = NULL;
    dlinfo(h, RTLD_DI_LINKMAP, &map);
    Dl_info info;
    dladdr((void *)f, &info);
    *base = (uintptr_t)info.dli_fbase;
    *size = 0;
    // Extent of its mappings: from its base to the end of its last segment.
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)info.dli_fbase;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
      if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > *size)
        *size = ph[i].p_vaddr + ph[i].p_memsz;
    *size = (*size + 4095) & ~(size_t)4095;
    (void)map;
  }
  dlclose(h);
  return c;
}

static const char *g_lib;
static volatile unsigned g_sink;

static void *keep_calling(void *arg) {
  (void)arg;
  void *h = dlopen(g_lib, RTLD_NOW);
  checksum_fn f = (checksum_fn)dlsym(h, "lib_checksum");
  for (int i = 0; i < 20000; i++)
    g_sink += f(kData, 4);
  dlclose(h);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  int n = atoi(argv[2]);
  const char *lib = argv[3];
  if (!strcmp(argv[1], "rounds")) {
    unsigned c = 0;
    for (int i = 0; i < n; i++)
      c = round_trip(lib, NULL, NULL);
    printf("rounds %d checksum %08x\n", n, c);
  } else if (!strcmp(argv[1], "moving")) {
    uintptr_t bases[1024];
    int places = 0;
    for (int i = 0; i < n && i < 1024; i++) {
      uintptr_t base;
      size_t size;
      round_trip(lib, &base, &size);
      int seen = 0;
      for (int k = 0; k < places; k++)
        seen |= bases[k] == base;
      if (!seen)
        bases[places++] = base;
      // Its place stays taken: the next load goes elsewhere.
      mmap((void *)base, size, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    }
    printf("rounds %d places %d\n", n, places);
  } else if (!strcmp(argv[1], "held") && argc > 5) {
    void *h = dlopen(lib, RTLD_NOW);
    printf("loaded\n");
    fflush(stdout);
    while (access(argv[4], F_OK) != 0)
      usleep(1000);
    for (int i = 0; i < n; i++) {
      checksum_fn f = (checksum_fn)dlsym(h, "lib_checksum");
      g_sink += f(kData, 4);
      dlclose(h);
      h = dlopen(lib, RTLD_NOW);
    }
    Dl_info info;
    dladdr(dlsym(h, "lib_checksum"), &info);
    uintptr_t base = (uintptr_t)info.dli_fbase;
    dlclose(h);
    mmap((void *)base, 1 << 16, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("unloaded\n");
    fflush(stdout);
    while (access(argv[5], F_OK) != 0)
      usleep(1000);
    printf("done\n");
  } else if (!strcmp(argv[1], "race") && argc > 4) {
    g_lib = lib;
    pthread_t t;
    pthread_create(&t, NULL, keep_calling, NULL);
    for (int i = 0; i < n; i++) {
      round_trip(argv[4], NULL, NULL);
      dlclose(dlopen(lib, RTLD_NOW)); // LIB stays: the thread holds it
    }
    pthread_join(t, NULL);
    printf("raced %d\n", n);
  } else {
    return 2;
  }
  return 0;
}
