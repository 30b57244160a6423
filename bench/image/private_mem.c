/* LD_PRELOAD'ed by bench/image.sh: when the process exits, appends its
 * private memory (Private_Clean + Private_Dirty of /proc/self/smaps_rollup,
 * in kB) to the file named by PRIVATE_MEM_OUT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((destructor)) static void private_mem(void) {
  const char *out = getenv("PRIVATE_MEM_OUT");
  if (!out) return;
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  if (!f) return;
  char line[256];
  long total = 0, v;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "Private_Clean: %ld kB", &v) == 1 || sscanf(line, "Private_Dirty: %ld kB", &v) == 1)
      total += v;
  }
  fclose(f);
  FILE *o = fopen(out, "a");
  if (!o) return;
  fprintf(o, "%ld\n", total);
  fclose(o);
}
