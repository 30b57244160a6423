/* bench/membind.sh: N calls of hwloc_get_membind and of
 * hwloc_get_area_membind on a page of this process, after one load of
 * this machine; prints the seconds each loop took. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) || hwloc_topology_load(t))
    return 1;
  hwloc_nodeset_t set = hwloc_bitmap_alloc();
  hwloc_membind_policy_t policy;
  static char page[4096] __attribute__((aligned(4096)));
  page[0] = 1;
  double t0 = now();
  for (long i = 0; i < n; i++)
    if (hwloc_get_membind(t, set, &policy, HWLOC_MEMBIND_BYNODESET) < 0)
      return 2;
  double t1 = now();
  for (long i = 0; i < n; i++)
    if (hwloc_get_area_membind(t, page, sizeof(page), set, &policy, HWLOC_MEMBIND_BYNODESET) < 0)
      return 3;
  double t2 = now();
  printf("%.3f %.3f\n", t1 - t0, t2 - t1);
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(t);
  return 0;
}
