/* hwloc 2.9 side of bench/image.sh.
 *   hwloc_shmem write XML FILE      writes the shmem image of XML's topology,
 *                                   prints "ADDR LENGTH"
 *   hwloc_shmem adopt FILE ADDR LEN N  adopts it N times (adopt, first query,
 *                                   destroy), prints p10/p50/p90 in us
 *   hwloc_shmem xml XML N           loads the XML N times (init, set_xml,
 *                                   load, first query, destroy), same output
 * Run with HWLOC_PLUGINS_PATH naming an empty directory so that loading no
 * plugin is not counted. */
#include <hwloc.h>
#include <hwloc/shmem.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, int pus) {
  qsort(t, n, sizeof(double), cmp);
  printf("%s p10 %.1f p50 %.1f p90 %.1f us (%d PUs)\n", what, t[n / 10], t[n / 2], t[n * 9 / 10], pus);
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "write")) {
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    if (hwloc_topology_set_xml(t, argv[2]) < 0 || hwloc_topology_load(t) < 0) { perror("load"); return 1; }
    size_t len;
    if (hwloc_shmem_topology_get_length(t, &len, 0) < 0) { perror("length"); return 1; }
    /* An address high in the user space, rounded to a page, as PMIx picks. */
    unsigned long addr = 0x7e0000000000UL;
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || hwloc_shmem_topology_write(t, fd, 0, (void *)addr, len, 0) < 0) { perror("write"); return 1; }
    close(fd);
    printf("%lu %zu\n", addr, len);
    hwloc_topology_destroy(t);
    return 0;
  }
  if (argc >= 6 && !strcmp(argv[1], "adopt")) {
    unsigned long addr = strtoul(argv[3], NULL, 0);
    size_t len = strtoul(argv[4], NULL, 0);
    int n = atoi(argv[5]), pus = 0;
    double *t = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
      double s = now_us();
      int fd = open(argv[2], O_RDONLY);
      hwloc_topology_t topo;
      if (fd < 0 || hwloc_shmem_topology_adopt(&topo, fd, 0, (void *)addr, len, 0) < 0) { perror("adopt"); return 1; }
      pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
      t[i] = now_us() - s;
      hwloc_topology_destroy(topo);
      close(fd);
    }
    report("hwloc-shmem-adopt", t, n, pus);
    return 0;
  }
  if (argc >= 4 && !strcmp(argv[1], "xml")) {
    int n = atoi(argv[3]), pus = 0;
    double *t = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
      double s = now_us();
      hwloc_topology_t topo;
      hwloc_topology_init(&topo);
      if (hwloc_topology_set_xml(topo, argv[2]) < 0 || hwloc_topology_load(topo) < 0) { perror("xml"); return 1; }
      pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
      t[i] = now_us() - s;
      hwloc_topology_destroy(topo);
    }
    report("hwloc-xml-load", t, n, pus);
    return 0;
  }
  fprintf(stderr, "usage: hwloc_shmem write XML FILE | adopt FILE ADDR LEN N | xml XML N\n");
  return 2;
}
