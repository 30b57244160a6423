/* What a C program may rely on from libhwloc.so.15 (issue 43, items
 * 6-13), one check per mode; exits 0 when the library behaves, non-zero
 * (or dies) otherwise.  Run under valgrind by memory_safety.rs where the
 * fault is memory that only valgrind sees.
 *
 * usage: memory_safety MODE [ARG]
 *   group    insert_group_object returns the caller's own Group (hwloc's
 *            semantics: inserted -> same pointer, merged -> the existing
 *            object, refused -> NULL), which stays usable
 *   groupsets  Groups whose sets disagree (a complete cpuset wider than
 *            the cpuset, a nodeset elsewhere) never remove an object the
 *            caller holds
 *   init     every byte of every object, attribute union, diff entry and
 *            distance matrix the library hands out is initialised
 *   diffnest diff documents nested 20,000 deep get -1/EINVAL (ARG: a
 *            folder to write one to)
 *   diffdev  diff loading refuses a device and a FIFO at once (ARG: a
 *            folder for the FIFO)
 *   addinfo  8,000 hwloc_obj_add_info calls take well under a second
 *   synth    a synthetic description with a huge NUMA index fails cleanly
 *            under a 1 GiB address-space limit
 *   paths    file names that are not UTF-8 are used as the bytes they are
 *            (ARG: a folder)
 *   foreign  hwloc_obj_add_info on a struct hwloc_obj the library did not
 *            allocate is refused without reading past it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <hwloc/linux.h>
#include <hwloc/diff.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/memcheck.h>

#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s (errno %d)\n", __FILE__,  \
              __LINE__, #c, errno);                                       \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static hwloc_topology_t synthetic(const char *desc) {
  hwloc_topology_t t;
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_set_synthetic(t, desc) == 0);
  CHECK(hwloc_topology_load(t) == 0);
  return t;
}

/* Asks valgrind whether every byte of [p, p+n) was written (an error
 * at this line's caller if not; nothing outside valgrind). */
#define touch(p, n) ((unsigned)VALGRIND_CHECK_MEM_IS_DEFINED((p), (n)) * 0u)

static int group(void) {
  hwloc_topology_t t;
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_set_synthetic(t, "pack:1 core:4 pu:1") == 0);
  CHECK(hwloc_topology_set_type_filter(t, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_ALL) == 0);
  CHECK(hwloc_topology_load(t) == 0);
  hwloc_obj_t g = hwloc_topology_alloc_group_object(t);
  CHECK(g);
  g->cpuset = hwloc_bitmap_alloc();
  hwloc_bitmap_set_range(g->cpuset, 0, 1);
  CHECK(hwloc_obj_add_info(g, "Mine", "yes") == 0);
  hwloc_bitmap_t mine = g->cpuset;
  hwloc_obj_t res = hwloc_topology_insert_group_object(t, g);
  /* Inserted: hwloc returns the caller's own object. */
  CHECK(res == g);
  /* The caller keeps using it: its fields, its bitmap, its infos. */
  g->userdata = &t;
  CHECK(g->type == HWLOC_OBJ_GROUP);
  CHECK(g->cpuset == mine);
  CHECK(hwloc_bitmap_weight(g->cpuset) == 2);
  CHECK(g->arity == 2);
  CHECK(g->parent && g->parent->type == HWLOC_OBJ_PACKAGE);
  CHECK(hwloc_obj_get_info_by_name(g, "Mine") != NULL);
  CHECK(hwloc_obj_add_info(g, "After", "1") == 0);
  CHECK(hwloc_get_obj_by_type(t, HWLOC_OBJ_GROUP, 0) == g);
  CHECK(hwloc_get_obj_by_type(t, HWLOC_OBJ_GROUP, 0)->userdata == &t);
  /* The same sets again: merged into the first, which is returned. */
  hwloc_obj_t g2 = hwloc_topology_alloc_group_object(t);
  CHECK(g2);
  g2->cpuset = hwloc_bitmap_dup(mine);
  res = hwloc_topology_insert_group_object(t, g2);
  CHECK(res == g);
  CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_GROUP) == 1);
  /* No set at all: refused (and freed), NULL. */
  hwloc_obj_t g3 = hwloc_topology_alloc_group_object(t);
  CHECK(g3);
  CHECK(hwloc_topology_insert_group_object(t, g3) == NULL);
  /* The first Group survives later changes with its address. */
  CHECK(hwloc_topology_insert_misc_object(t, g, "misc") != NULL);
  CHECK(hwloc_get_obj_by_type(t, HWLOC_OBJ_GROUP, 0) == g);
  CHECK(hwloc_bitmap_weight(g->cpuset) == 2);
  hwloc_topology_check(t);
  hwloc_topology_destroy(t);
  return 0;
}

/* Every object of the tree, by type and index, as the caller saw it. */
static int same_objects(hwloc_topology_t t, hwloc_obj_t *seen, int n) {
  int k = 0;
  for (int d = 0; d < hwloc_topology_get_depth(t); d++)
    for (unsigned i = 0; i < hwloc_get_nbobjs_by_depth(t, d); i++) {
      hwloc_obj_t o = hwloc_get_obj_by_depth(t, d, i);
      if (o->type == HWLOC_OBJ_GROUP)
        continue;
      if (k >= n || seen[k] != o)
        return 0;
      k++;
    }
  for (unsigned i = 0; i < hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE); i++) {
    if (k >= n || seen[k] != hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i))
      return 0;
    k++;
  }
  return k == n;
}

static int groupsets(void) {
  /* Sets a caller may hand over; each insertion either merges, inserts
   * or refuses, but every object there before stays where it was. */
  static const char *sets[][4] = {
      /* cpuset, complete cpuset, nodeset, complete nodeset */
      {"0-3", "0-7", NULL, NULL},
      {"0-3", "0-1", NULL, NULL},
      {"0-1", "0-1,6-7", NULL, NULL},
      {"2-5", "2-5", NULL, NULL},
      {"0-3", NULL, "1", NULL},
      {NULL, NULL, "0", "0-1"},
      {"0-7", "0-1", NULL, NULL},
      {"0-1", "4-5", NULL, NULL},
  };
  for (unsigned s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
    hwloc_topology_t t;
    CHECK(hwloc_topology_init(&t) == 0);
    CHECK(hwloc_topology_set_synthetic(t, "pack:2 [numa] core:2 pu:2") == 0);
    CHECK(hwloc_topology_load(t) == 0);
    hwloc_obj_t seen[64];
    int n = 0;
    for (int d = 0; d < hwloc_topology_get_depth(t); d++)
      for (unsigned i = 0; i < hwloc_get_nbobjs_by_depth(t, d); i++)
        seen[n++] = hwloc_get_obj_by_depth(t, d, i);
    for (unsigned i = 0; i < hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE); i++)
      seen[n++] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
    hwloc_obj_t pack1 = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 1);
    hwloc_obj_t g = hwloc_topology_alloc_group_object(t);
    CHECK(g);
    hwloc_bitmap_t *fields[4] = {&g->cpuset, &g->complete_cpuset, &g->nodeset,
                                 &g->complete_nodeset};
    for (int f = 0; f < 4; f++)
      if (sets[s][f]) {
        *fields[f] = hwloc_bitmap_alloc();
        CHECK(hwloc_bitmap_list_sscanf(*fields[f], sets[s][f]) == 0);
      }
    hwloc_obj_t res = hwloc_topology_insert_group_object(t, g);
    if (!same_objects(t, seen, n)) {
      fprintf(stderr, "sets %u: an object the caller held was removed or moved\n", s);
      return 1;
    }
    CHECK(pack1->type == HWLOC_OBJ_PACKAGE && pack1->logical_index == 1);
    CHECK(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) == 8);
    if (res) {
      CHECK(res == g || res->type != HWLOC_OBJ_GROUP || res == hwloc_get_obj_by_type(t, HWLOC_OBJ_GROUP, 0));
      CHECK(res->cpuset != NULL);
    }
    hwloc_topology_check(t);
    hwloc_topology_destroy(t);
  }
  return 0;
}

static void touch_tree(hwloc_obj_t o, unsigned *acc) {
  *acc += touch(o, sizeof(*o));
  if (o->attr)
    *acc += touch(o->attr, sizeof(*o->attr));
  for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling)
    touch_tree(c, acc);
  for (hwloc_obj_t c = o->memory_first_child; c; c = c->next_sibling)
    touch_tree(c, acc);
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
    touch_tree(c, acc);
  for (hwloc_obj_t c = o->misc_first_child; c; c = c->next_sibling)
    touch_tree(c, acc);
}

static int init(const char *xml) {
  unsigned acc = 0;
  hwloc_topology_t t = synthetic("pack:2 [numa] core:2 pu:2");
  hwloc_obj_t g = hwloc_topology_alloc_group_object(t);
  CHECK(g);
  /* As hwloc's calloc: all zero, the depth and Group attributes too. */
  CHECK(g->depth == 0);
  CHECK(g->attr->group.depth == 0 && g->attr->group.kind == 0);
  CHECK(g->attr->group.subkind == 0 && g->attr->group.dont_merge == 0);
  acc += touch(g, sizeof(*g)) + touch(g->attr, sizeof(*g->attr));
  g->cpuset = hwloc_bitmap_alloc();
  hwloc_bitmap_set_range(g->cpuset, 0, 1);
  CHECK(hwloc_topology_insert_group_object(t, g) != NULL);
  touch_tree(hwloc_get_root_obj(t), &acc);
  char *buf;
  int len;
  CHECK(hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) == 0);
  acc += touch(buf, len);
  hwloc_free_xmlbuffer(t, buf);
  /* Diff entries. */
  hwloc_topology_t t2;
  CHECK(hwloc_topology_dup(&t2, t) == 0);
  CHECK(hwloc_obj_add_info(hwloc_get_root_obj(t2), "Foo", "Bar") == 0);
  hwloc_get_obj_by_type(t2, HWLOC_OBJ_NUMANODE, 0)->attr->numanode.local_memory += 4096;
  hwloc_topology_diff_t diff;
  CHECK(hwloc_topology_diff_build(t, t2, 0, &diff) >= 0);
  for (hwloc_topology_diff_t d = diff; d; d = d->generic.next)
    acc += touch(d, sizeof(*d));
  hwloc_topology_diff_destroy(diff);
  hwloc_topology_destroy(t2);
  hwloc_topology_destroy(t);
  /* A distance matrix, and every object of an XML topology with I/O. */
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_set_xml(t, xml) == 0);
  CHECK(hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) == 0);
  CHECK(hwloc_topology_load(t) == 0);
  touch_tree(hwloc_get_root_obj(t), &acc);
  unsigned nr = 4;
  struct hwloc_distances_s *dist[4];
  CHECK(hwloc_distances_get(t, &nr, dist, 0, 0) == 0);
  CHECK(nr > 0);
  for (unsigned i = 0; i < nr && i < 4; i++) {
    acc += touch(dist[i], sizeof(*dist[i]));
    hwloc_distances_release(t, dist[i]);
  }
  hwloc_topology_destroy(t);
  printf("%u\n", acc);
  return 0;
}

static int diffnest(const char *dir) {
  const int n = 20000;
  size_t cap = 64 + (size_t)n * 16;
  char *doc = malloc(cap);
  CHECK(doc);
  size_t off = (size_t)sprintf(doc, "<topologydiff>");
  for (int i = 0; i < n; i++)
    off += (size_t)sprintf(doc + off, "<diff>");
  for (int i = 0; i < n; i++)
    off += (size_t)sprintf(doc + off, "</diff>");
  off += (size_t)sprintf(doc + off, "</topologydiff>");
  hwloc_topology_diff_t diff = NULL;
  char *refname = NULL;
  errno = 0;
  CHECK(hwloc_topology_diff_load_xmlbuffer(doc, (int)off + 1, &diff, &refname) == -1);
  CHECK(errno == EINVAL);
  char path[4096];
  snprintf(path, sizeof(path), "%s/nested.xml", dir);
  FILE *f = fopen(path, "w");
  CHECK(f && fwrite(doc, 1, off, f) == off && fclose(f) == 0);
  errno = 0;
  CHECK(hwloc_topology_diff_load_xml(path, &diff, &refname) == -1);
  CHECK(errno == EINVAL);
  free(doc);
  return 0;
}

static int diffdev(const char *dir) {
  /* A read that never ends, or an open that blocks, would run into this. */
  alarm(10);
  struct rlimit as = {1UL << 30, 1UL << 30};
  CHECK(setrlimit(RLIMIT_AS, &as) == 0);
  hwloc_topology_diff_t diff = NULL;
  errno = 0;
  CHECK(hwloc_topology_diff_load_xml("/dev/zero", &diff, NULL) == -1);
  CHECK(errno == EINVAL);
  char fifo[4096];
  snprintf(fifo, sizeof(fifo), "%s/diff.fifo", dir);
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  errno = 0;
  CHECK(hwloc_topology_diff_load_xml(fifo, &diff, NULL) == -1);
  CHECK(errno == EINVAL);
  /* The same for a cpumask file (an outside attack found it blocking on
     a FIFO and reading /dev/zero until memory ran out). */
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  CHECK(set != NULL);
  CHECK(hwloc_linux_read_path_as_cpumask("/dev/zero", set) == -1);
  CHECK(hwloc_linux_read_path_as_cpumask(fifo, set) == -1);
  hwloc_bitmap_free(set);
  unlink(fifo);
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int addinfo(void) {
  alarm(20);
  hwloc_topology_t t = synthetic("pack:2 pu:2");
  hwloc_obj_t root = hwloc_get_root_obj(t);
  hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, 1);
  unsigned before = root->infos_count;
  char name[32];
  double start = now();
  for (int i = 0; i < 8000; i++) {
    snprintf(name, sizeof(name), "Info%d", i);
    CHECK(hwloc_obj_add_info(root, name, "value") == 0);
    CHECK(hwloc_obj_add_info(pu, "Same", name) == 0);
  }
  double took = now() - start;
  CHECK(root->infos_count == before + 8000);
  CHECK(pu->infos_count == 8000);
  CHECK(strcmp(root->infos[before + 7999].name, "Info7999") == 0);
  CHECK(strcmp(pu->infos[7999].value, "Info7999") == 0);
  /* Appended, duplicates kept, in order: the first "Same" wins a lookup. */
  CHECK(strcmp(hwloc_obj_get_info_by_name(pu, "Same"), "Info0") == 0);
  /* The model sees them: an export carries them. */
  char *buf;
  int len;
  CHECK(hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) == 0);
  CHECK(strstr(buf, "name=\"Info7999\"") != NULL);
  hwloc_free_xmlbuffer(t, buf);
  printf("%.3f s\n", took);
  CHECK(took < 1.0);
  hwloc_topology_destroy(t);
  return 0;
}

static int synth(void) {
  struct rlimit as = {1UL << 30, 1UL << 30};
  CHECK(setrlimit(RLIMIT_AS, &as) == 0);
  const char *descs[] = {
      "numa:2(indexes=0,16777215) core:1024 pu:1",
      "pack:64 [numa(indexes=0:16777215)] core:32 pu:1",
  };
  for (unsigned i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
    hwloc_topology_t t;
    CHECK(hwloc_topology_init(&t) == 0);
    errno = 0;
    int r = hwloc_topology_set_synthetic(t, descs[i]);
    if (r == 0)
      r = hwloc_topology_load(t);
    /* Refused (or, were it small enough, loaded): never an abort. */
    printf("%s: %d errno %d\n", descs[i], r, r ? errno : 0);
    CHECK(r == 0 || errno == EINVAL || errno == ENOMEM);
    hwloc_topology_destroy(t);
  }
  return 0;
}

static int paths(const char *dir) {
  char in[4096], out[4096], dpath[4096];
  snprintf(in, sizeof(in), "%s/\xff\xfe.xml", dir);
  snprintf(out, sizeof(out), "%s/\xff\xfd-out.xml", dir);
  snprintf(dpath, sizeof(dpath), "%s/\xfe-diff.xml", dir);
  hwloc_topology_t t = synthetic("pack:2 pu:2");
  CHECK(hwloc_topology_export_xml(t, in, 0) == 0);
  struct stat st;
  /* Written under its own name, not one with U+FFFD in it. */
  CHECK(stat(in, &st) == 0 && st.st_size > 0);
  hwloc_topology_t t2;
  CHECK(hwloc_topology_init(&t2) == 0);
  CHECK(hwloc_topology_set_xml(t2, in) == 0);
  CHECK(hwloc_topology_load(t2) == 0);
  CHECK(hwloc_get_nbobjs_by_type(t2, HWLOC_OBJ_PU) == 4);
  CHECK(hwloc_topology_export_xml(t2, out, 0) == 0);
  CHECK(stat(out, &st) == 0 && st.st_size > 0);
  /* A diff written and read back under such a name. */
  hwloc_get_obj_by_type(t2, HWLOC_OBJ_NUMANODE, 0)->attr->numanode.local_memory += 4096;
  hwloc_topology_diff_t diff, back;
  CHECK(hwloc_topology_diff_build(t, t2, 0, &diff) == 0);
  CHECK(diff != NULL);
  CHECK(hwloc_topology_diff_export_xml(diff, "ref", dpath) == 0);
  CHECK(stat(dpath, &st) == 0 && st.st_size > 0);
  char *refname = NULL;
  CHECK(hwloc_topology_diff_load_xml(dpath, &back, &refname) == 0);
  CHECK(back != NULL && refname && strcmp(refname, "ref") == 0);
  free(refname);
  hwloc_topology_diff_destroy(back);
  hwloc_topology_diff_destroy(diff);
  hwloc_topology_destroy(t2);
  hwloc_topology_destroy(t);
  return 0;
}

static int foreign(void) {
  hwloc_topology_t t = synthetic("pack:2 pu:2");
  /* A program's own object, exactly the size of the structure, on the
   * heap (valgrind sees a read past it). */
  struct hwloc_obj *mine = calloc(1, sizeof(*mine));
  CHECK(mine);
  mine->type = HWLOC_OBJ_GROUP;
  errno = 0;
  CHECK(hwloc_obj_add_info(mine, "Name", "Value") == -1);
  CHECK(errno == EINVAL);
  CHECK(mine->infos == NULL && mine->infos_count == 0);
  /* A copy of a library object is not one either. */
  struct hwloc_obj *copy = malloc(sizeof(*copy));
  CHECK(copy);
  memcpy(copy, hwloc_get_root_obj(t), sizeof(*copy));
  copy->infos = NULL;
  copy->infos_count = 0;
  errno = 0;
  CHECK(hwloc_obj_add_info(copy, "Name", "Value") == -1);
  CHECK(errno == EINVAL);
  free(copy);
  free(mine);
  /* The library's own objects still take infos. */
  CHECK(hwloc_obj_add_info(hwloc_get_root_obj(t), "Name", "Value") == 0);
  hwloc_topology_destroy(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *mode = argv[1], *arg = argc > 2 ? argv[2] : ".";
  if (!strcmp(mode, "group"))
    return group();
  if (!strcmp(mode, "groupsets"))
    return groupsets();
  if (!strcmp(mode, "init"))
    return init(arg);
  if (!strcmp(mode, "diffnest"))
    return diffnest(arg);
  if (!strcmp(mode, "diffdev"))
    return diffdev(arg);
  if (!strcmp(mode, "addinfo"))
    return addinfo();
  if (!strcmp(mode, "synth"))
    return synth();
  if (!strcmp(mode, "paths"))
    return paths(arg);
  if (!strcmp(mode, "foreign"))
    return foreign();
  return 2;
}
