/* One whole process as a program on libhwloc sees it: init, load, one
 * query (the number of PUs), destroy; prints the PU count and the
 * process's peak resident memory in KiB (getrusage). */
#include <hwloc.h>
#include <stdio.h>
#include <sys/resource.h>

int main(void)
{
  hwloc_topology_t t;
  struct rusage ru;
  int pus;
  if (hwloc_topology_init(&t) || hwloc_topology_load(t))
    return 1;
  pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_topology_destroy(t);
  getrusage(RUSAGE_SELF, &ru);
  printf("%d %ld\n", pus, ru.ru_maxrss);
  return 0;
}
