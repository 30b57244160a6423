/* A program built with hwloc 2.14's headers: it uses what 2.10 to 2.14
 * added (hwloc_obj_set_subtype, hwloc_topology_free_group_object,
 * hwloc_topology_get_default_nodeset, HWLOC_MEMBIND_WEIGHTED_INTERLEAVE,
 * HWLOC_LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY, the membind support's
 * weighted_interleave_membind) and the long-standing
 * hwloc_obj_add_other_obj_sets.  Exits 0 when the library behaves as the
 * headers document, prints the failing check otherwise. */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);               \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static int synthetic(void) {
  hwloc_topology_t t;
  CHECK(hwloc_get_api_version() == HWLOC_API_VERSION);
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_set_synthetic(t, "pack:2 [numa] core:2 pu:2") == 0);
  CHECK(hwloc_topology_load(t) == 0);

  /* A Group built from two cores of different packages. */
  hwloc_obj_t g = hwloc_topology_alloc_group_object(t);
  CHECK(g);
  CHECK(hwloc_obj_add_other_obj_sets(g, hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, 0)) == 0);
  CHECK(hwloc_obj_add_other_obj_sets(g, hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, 3)) == 0);
  CHECK(hwloc_bitmap_weight(g->cpuset) == 4);
  CHECK(hwloc_bitmap_weight(g->nodeset) == 2);
  CHECK(hwloc_obj_set_subtype(t, g, "Mine") == 0);
  CHECK(g->subtype && !strcmp(g->subtype, "Mine"));
  /* Not inserted after all: freed, once. */
  CHECK(hwloc_topology_free_group_object(t, g) == 0);

  /* Subtypes of the tree's objects. */
  hwloc_obj_t pack = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 1);
  CHECK(hwloc_obj_set_subtype(t, pack, "Slow") == 0);
  char *xml;
  int len;
  CHECK(hwloc_topology_export_xmlbuffer(t, &xml, &len, 0) == 0);
  CHECK(strstr(xml, "subtype=\"Slow\""));
  hwloc_free_xmlbuffer(t, xml);
  CHECK(hwloc_obj_set_subtype(t, pack, NULL) == 0 && !pack->subtype);

  /* Default nodes: both, one per package, cover the machine. */
  hwloc_nodeset_t ns = hwloc_bitmap_alloc();
  CHECK(hwloc_topology_get_default_nodeset(t, ns, 0) == 0);
  CHECK(hwloc_bitmap_weight(ns) == 2);
  errno = 0;
  CHECK(hwloc_topology_get_default_nodeset(t, ns, 1) == -1 && errno == EINVAL);

  /* A locality across both packages intersects both nodes' only. */
  hwloc_cpuset_t cs = hwloc_bitmap_alloc();
  hwloc_bitmap_set(cs, 3);
  hwloc_bitmap_set(cs, 4);
  struct hwloc_location loc = {.type = HWLOC_LOCATION_TYPE_CPUSET, .location.cpuset = cs};
  hwloc_obj_t nodes[4];
  unsigned nr = 4;
  CHECK(hwloc_get_local_numanode_objs(t, &loc, &nr, nodes, 0) == 0 && nr == 0);
  nr = 4;
  CHECK(hwloc_get_local_numanode_objs(t, &loc, &nr, nodes,
                                      HWLOC_LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY) == 0);
  CHECK(nr == 2);
  hwloc_bitmap_free(cs);
  hwloc_bitmap_free(ns);
  hwloc_topology_destroy(t);
  return 0;
}

/* This machine: the weighted interleave policy where the kernel has it. */
static int this_system(void) {
  hwloc_topology_t t;
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_load(t) == 0);
  const struct hwloc_topology_support *s = hwloc_topology_get_support(t);
  int kernel = access("/sys/kernel/mm/mempolicy/weighted_interleave", F_OK) == 0;
  CHECK(s->membind->weighted_interleave_membind == kernel);
  if (kernel) {
    hwloc_nodeset_t ns = hwloc_bitmap_dup(hwloc_topology_get_topology_nodeset(t));
    CHECK(hwloc_set_membind(t, ns, HWLOC_MEMBIND_WEIGHTED_INTERLEAVE,
                            HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0);
    hwloc_membind_policy_t policy;
    CHECK(hwloc_get_membind(t, ns, &policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0);
    CHECK(policy == HWLOC_MEMBIND_WEIGHTED_INTERLEAVE);
    hwloc_bitmap_free(ns);
  }
  hwloc_topology_destroy(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "this-system"))
    return this_system();
  return synthetic();
}
