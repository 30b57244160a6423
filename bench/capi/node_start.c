/* bench/service.sh: one process of a node's start-up as a program on
 * libhwloc sees it (init, load, one query, destroy); prints the time
 * hwloc_topology_load itself took, in seconds, and the PU count. */
#include <hwloc.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
  hwloc_topology_t t;
  double t0, t1;
  int pus;
  if (hwloc_topology_init(&t))
    return 1;
  t0 = now();
  if (hwloc_topology_load(t))
    return 2;
  t1 = now();
  pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_topology_destroy(t);
  printf("%.6f %d\n", t1 - t0, pus);
  return 0;
}
