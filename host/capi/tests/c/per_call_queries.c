/* membind_speed.rs: N rounds of the queries hwloc answers from memory or
 * with one system call (memory binding of this thread and of a page, the
 * support flags, the CPU binding), after one load of this machine. Run
 * under strace, its file reads must not grow with N. */
#include <hwloc.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10;
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) || hwloc_topology_load(t))
    return 1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_membind_policy_t policy;
  static char page[4096] __attribute__((aligned(4096)));
  page[0] = 1;
  for (long i = 0; i < n; i++) {
    if (hwloc_get_membind(t, set, &policy, HWLOC_MEMBIND_BYNODESET) < 0)
      return 2;
    if (hwloc_get_membind(t, set, &policy, 0) < 0)
      return 3;
    if (hwloc_get_area_membind(t, page, sizeof(page), set, &policy, HWLOC_MEMBIND_BYNODESET) < 0)
      return 4;
    if (!hwloc_topology_get_support(t)->membind->get_thisthread_membind)
      return 5;
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD) < 0)
      return 6;
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(t);
  return 0;
}
