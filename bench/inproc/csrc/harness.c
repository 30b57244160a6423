/* libhwloc side of the in-process benchmark: loads and queries through
 * hwloc 2's public API, and the heap in use as glibc's allocator counts it. */
#include <hwloc.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

/* Bytes held by live malloc blocks, mmap'd large blocks included. */
size_t wb_heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

static hwloc_topology_t init(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) < 0) return NULL;
  /* All I/O kept, as the wloc side does. */
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  return t;
}

/* Loads an XML buffer; NULL on failure. */
void *wb_load_xml(const char *buf, int len) {
  hwloc_topology_t t = init();
  if (!t) return NULL;
  if (hwloc_topology_set_xmlbuffer(t, buf, len) < 0 || hwloc_topology_load(t) < 0) {
    hwloc_topology_destroy(t);
    return NULL;
  }
  return t;
}

/* Builds a synthetic topology; NULL on failure. */
void *wb_load_synthetic(const char *desc) {
  hwloc_topology_t t = init();
  if (!t) return NULL;
  if (hwloc_topology_set_synthetic(t, desc) < 0 || hwloc_topology_load(t) < 0) {
    hwloc_topology_destroy(t);
    return NULL;
  }
  return t;
}

void wb_destroy(void *t) { hwloc_topology_destroy((hwloc_topology_t)t); }

/* Total number of objects, I/O and misc included. */
unsigned long wb_count_objects(void *tp) {
  hwloc_topology_t t = tp;
  unsigned long n = 0;
  int depth = hwloc_topology_get_depth(t);
  for (int d = 0; d < depth; d++) n += hwloc_get_nbobjs_by_depth(t, d);
  int special[] = {HWLOC_TYPE_DEPTH_NUMANODE, HWLOC_TYPE_DEPTH_BRIDGE, HWLOC_TYPE_DEPTH_PCI_DEVICE,
                   HWLOC_TYPE_DEPTH_OS_DEVICE, HWLOC_TYPE_DEPTH_MISC, HWLOC_TYPE_DEPTH_MEMCACHE};
  for (unsigned i = 0; i < sizeof special / sizeof *special; i++)
    n += hwloc_get_nbobjs_by_depth(t, special[i]);
  return n;
}

/* Every object of every normal level by depth and index, then every PU
 * and every Core by type and index: sum of logical indexes. */
unsigned long wb_q_by_depth_type(void *tp) {
  hwloc_topology_t t = tp;
  unsigned long sum = 0;
  int depth = hwloc_topology_get_depth(t);
  for (int d = 0; d < depth; d++) {
    unsigned n = hwloc_get_nbobjs_by_depth(t, d);
    for (unsigned i = 0; i < n; i++) sum += hwloc_get_obj_by_depth(t, d, i)->logical_index;
  }
  hwloc_obj_type_t types[] = {HWLOC_OBJ_PU, HWLOC_OBJ_CORE};
  for (int k = 0; k < 2; k++) {
    int n = hwloc_get_nbobjs_by_type(t, types[k]);
    for (int i = 0; i < n; i++) sum += hwloc_get_obj_by_type(t, types[k], i)->logical_index;
  }
  return sum;
}

/* The covering object of each PU pair (i, i + step): sum of depths. */
unsigned long wb_q_covering(void *tp, unsigned step) {
  hwloc_topology_t t = tp;
  unsigned long sum = 0;
  int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int i = 0; i < n; i++) {
    hwloc_obj_t a = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, i);
    hwloc_obj_t b = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (i + step) % n);
    hwloc_bitmap_or(set, a->cpuset, b->cpuset);
    hwloc_obj_t c = hwloc_get_obj_covering_cpuset(t, set);
    sum += c ? (unsigned long)c->depth : 1000;
  }
  hwloc_bitmap_free(set);
  return sum;
}

/* The Package (or Machine) ancestor of every PU: sum of logical indexes. */
unsigned long wb_q_ancestor(void *tp) {
  hwloc_topology_t t = tp;
  unsigned long sum = 0;
  hwloc_obj_type_t at = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) > 0 ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_MACHINE;
  hwloc_obj_t pu = NULL;
  while ((pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu)) != NULL) {
    hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, at, pu);
    sum += a ? a->logical_index + 1 : 0;
  }
  return sum;
}

/* Every PU then every Core by next_obj_by_type: sum of OS indexes. */
unsigned long wb_q_next(void *tp) {
  hwloc_topology_t t = tp;
  unsigned long sum = 0;
  hwloc_obj_t o = NULL;
  while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, o)) != NULL) sum += o->os_index;
  while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, o)) != NULL) sum += o->os_index;
  return sum;
}

/* The nodeset of every Core's cpuset, and of every PU pair (i, i + n/2):
 * sum of weights. */
unsigned long wb_q_nodeset(void *tp) {
  hwloc_topology_t t = tp;
  unsigned long sum = 0;
  hwloc_bitmap_t ns = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
  hwloc_obj_t o = NULL;
  while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, o)) != NULL) {
    hwloc_cpuset_to_nodeset(t, o->cpuset, ns);
    sum += hwloc_bitmap_weight(ns);
  }
  int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  for (int i = 0; i < n; i++) {
    hwloc_bitmap_or(set, hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, i)->cpuset,
                    hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (i + n / 2) % n)->cpuset);
    hwloc_cpuset_to_nodeset(t, set, ns);
    sum += hwloc_bitmap_weight(ns);
  }
  hwloc_bitmap_free(ns);
  hwloc_bitmap_free(set);
  return sum;
}
