/* One whole process as a program on libhwloc sees it: init, load, one
 * query (the number of PUs), destroy; prints the PU count and the
 * process's peak resident memory in KiB (VmHWM: getrusage's maximum
 * would include the parent's before exec). */
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
  hwloc_topology_t t;
  char line[256];
  long hwm = -1;
  FILE *f;
  int pus;
  if (hwloc_topology_init(&t) || hwloc_topology_load(t))
    return 1;
  pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_topology_destroy(t);
  f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, "VmHWM:", 6))
      sscanf(line + 6, "%ld", &hwm);
  if (f)
    fclose(f);
  printf("%d %ld\n", pus, hwm);
  return 0;
}
