/* Interposed before libhwloc (LD_PRELOAD): sums the process CPU time
 * (CLOCK_PROCESS_CPUTIME_ID) spent in hwloc_topology_init,
 * hwloc_topology_load and hwloc_shmem_topology_adopt, and at exit writes
 * "PID INIT_NS LOAD_NS ADOPT_NS CALLS" to $LOADTIME_DIR/PID. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct hwloc_topology *hwloc_topology_t;
static long long spent[3];
static int calls;

static long long cpu_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define WRAP(slot, name, proto, args)                          \
  int name proto                                               \
  {                                                            \
    static int (*real) proto;                                  \
    if (!real)                                                 \
      real = (int (*) proto) dlsym(RTLD_NEXT, #name);          \
    long long t0 = cpu_ns();                                   \
    int r = real args;                                         \
    spent[slot] += cpu_ns() - t0;                              \
    calls++;                                                   \
    return r;                                                  \
  }

WRAP(0, hwloc_topology_init, (hwloc_topology_t *t), (t))
WRAP(1, hwloc_topology_load, (hwloc_topology_t t), (t))
WRAP(2, hwloc_shmem_topology_adopt,
     (hwloc_topology_t *t, int fd, uint64_t off, void *addr, size_t len, unsigned long flags),
     (t, fd, off, addr, len, flags))

__attribute__((destructor)) static void report(void)
{
  const char *dir = getenv("LOADTIME_DIR");
  if (!dir || !calls)
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%d", dir, (int) getpid());
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  fprintf(f, "%d %lld %lld %lld %d\n", (int) getpid(), spent[0], spent[1], spent[2], calls);
  fclose(f);
}
