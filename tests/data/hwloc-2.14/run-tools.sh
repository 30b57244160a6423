#!/usr/bin/env bash
# hwloc 2.14.0's own tests of its tools (utils/hwloc/test-hwloc-*.sh, utils/lstopo/test-lstopo.sh) run
# against wloc, through wrappers named as hwloc's tools.
# usage: run-tools.sh WLOC [SUITE_WORK [OUT]]
#   WLOC:       the wloc executable to test.
#   SUITE_WORK: where hwloc 2.14.0 is unpacked and built by run.sh beside this script (default
#               /tmp/hwloc-2.14-suite; built first with `run.sh own SUITE_WORK` when missing). Only read.
#   OUT:        a folder for the wrappers, the adapted scripts and their logs (default: a new mktemp folder).
# Each script is copied with its builddir= line pointing to the wrappers (hwloc-calc runs `WLOC calc`, ...,
# lstopo-no-graphics runs `WLOC ls`); the scripts read hwloc's source tree and write in their own mktemp folders.
# The wrappers set WLOC_HWLOC_COMPAT=2: where wloc keeps a hwloc 3.0 behaviour by default, hwloc 2.x's is
# asked for (see docs/hwloc-differences.md).
# Prints 'NAME: pass|fail' per script (the log in OUT/NAME.log) and a last line 'N passed, M failed'.
set -u
[ $# -ge 1 ] || { echo "usage: $0 WLOC [SUITE_WORK [OUT]]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
wloc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$wloc" ] || { echo "$1: not an executable" >&2; exit 2; }
work=${2:-/tmp/hwloc-2.14-suite}
out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/wloc-hwloc-tools.XXXXXX")}
src=$work/hwloc-2.14.0
if [ ! -f "$src/utils/hwloc/test-hwloc-calc.sh" ]; then
  "$here/run.sh" own "$work" > /dev/null || { echo "hwloc 2.14.0 could not be built in $work" >&2; exit 2; }
fi
mkdir -p "$out/bin" || exit 2
out=$(cd "$out" && pwd)
for t in calc annotate compress-dir uncompress-dir diff patch distrib info; do
  printf '#!/bin/sh\nWLOC_HWLOC_COMPAT=2 exec "%s" %s "$@"\n' "$wloc" "$t" > "$out/bin/hwloc-$t"
done
printf '#!/bin/sh\nWLOC_HWLOC_COMPAT=2 exec "%s" ls "$@"\n' "$wloc" > "$out/bin/lstopo-no-graphics"
chmod +x "$out/bin/"*
pass=0; failn=0
for s in hwloc/test-hwloc-calc hwloc/test-hwloc-annotate hwloc/test-hwloc-compress-dir hwloc/test-hwloc-diffpatch \
         hwloc/test-hwloc-distrib hwloc/test-hwloc-info lstopo/test-lstopo; do
  name=$(basename "$s")
  sed "s|^builddir=.*|builddir=\"$out/bin\"|" "$src/utils/$s.sh" > "$out/$name.sh"; chmod +x "$out/$name.sh"
  if ( cd "$src/utils/$(dirname "$s")" && TMPDIR="$out" timeout -s KILL 600 sh "$out/$name.sh" ) > "$out/$name.log" 2>&1; then
    pass=$((pass+1)); echo "$name: pass"
  else
    failn=$((failn+1)); echo "$name: fail"
  fi
done
echo "$pass passed, $failn failed"
