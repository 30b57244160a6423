/* Prints every flag of hwloc_topology_get_support() after loading the
 * source named on the command line ("this", "xml FILE", "xml-import FILE",
 * "synthetic DESC" or "fsroot DIR"), one "part.field value" per line. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOW(part, s, f) printf(#part "." #f " %u\n", (unsigned) (s)->f)

int main(int argc, char **argv)
{
  hwloc_topology_t t;
  const struct hwloc_topology_support *s;
  int err = 0;
  /* hwloc 2 has no call for a recorded root: its variable names it. */
  if (argc > 2 && !strcmp(argv[1], "fsroot"))
    setenv("HWLOC_FSROOT", argv[2], 1);
  if (argc < 2 || hwloc_topology_init(&t))
    return 2;
  if (!strcmp(argv[1], "xml") && argc > 2)
    err = hwloc_topology_set_xml(t, argv[2]);
  else if (!strcmp(argv[1], "xml-import") && argc > 2) {
    err = hwloc_topology_set_xml(t, argv[2]);
    err |= hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT);
  } else if (!strcmp(argv[1], "synthetic") && argc > 2)
    err = hwloc_topology_set_synthetic(t, argv[2]);
  else if (strcmp(argv[1], "this") && strcmp(argv[1], "fsroot"))
    return 2;
  if (err || hwloc_topology_load(t)) {
    printf("load failed\n");
    return 1;
  }
  s = hwloc_topology_get_support(t);
  printf("thissystem %d\n", hwloc_topology_is_thissystem(t));
  SHOW(discovery, s->discovery, pu);
  SHOW(discovery, s->discovery, numa);
  SHOW(discovery, s->discovery, numa_memory);
  SHOW(discovery, s->discovery, disallowed_pu);
  SHOW(discovery, s->discovery, disallowed_numa);
  SHOW(discovery, s->discovery, cpukind_efficiency);
  SHOW(cpubind, s->cpubind, set_thisproc_cpubind);
  SHOW(cpubind, s->cpubind, get_thisproc_cpubind);
  SHOW(cpubind, s->cpubind, set_proc_cpubind);
  SHOW(cpubind, s->cpubind, get_proc_cpubind);
  SHOW(cpubind, s->cpubind, set_thisthread_cpubind);
  SHOW(cpubind, s->cpubind, get_thisthread_cpubind);
  SHOW(cpubind, s->cpubind, set_thread_cpubind);
  SHOW(cpubind, s->cpubind, get_thread_cpubind);
  SHOW(cpubind, s->cpubind, get_thisproc_last_cpu_location);
  SHOW(cpubind, s->cpubind, get_proc_last_cpu_location);
  SHOW(cpubind, s->cpubind, get_thisthread_last_cpu_location);
  SHOW(membind, s->membind, set_thisproc_membind);
  SHOW(membind, s->membind, get_thisproc_membind);
  SHOW(membind, s->membind, set_proc_membind);
  SHOW(membind, s->membind, get_proc_membind);
  SHOW(membind, s->membind, set_thisthread_membind);
  SHOW(membind, s->membind, get_thisthread_membind);
  SHOW(membind, s->membind, set_area_membind);
  SHOW(membind, s->membind, get_area_membind);
  SHOW(membind, s->membind, alloc_membind);
  SHOW(membind, s->membind, firsttouch_membind);
  SHOW(membind, s->membind, bind_membind);
  SHOW(membind, s->membind, interleave_membind);
  SHOW(membind, s->membind, nexttouch_membind);
  SHOW(membind, s->membind, migrate_membind);
  SHOW(membind, s->membind, get_area_memlocation);
  SHOW(misc, s->misc, imported_support);
  hwloc_topology_destroy(t);
  return 0;
}
