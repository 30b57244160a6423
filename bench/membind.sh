#!/usr/bin/env bash
# Side-by-side benchmark of memory-binding queries, as a binding's test
# suite makes them: 1,000,000 hwloc_get_membind and 1,000,000
# hwloc_get_area_membind calls (bench/capi/membind_queries.c) on wloc's
# libhwloc.so.15 and on Debian's libhwloc 2.9, in the same run,
# alternating the libraries, 5 runs each; medians and their ratio
# (wloc / libhwloc; the target is at most 1).
#
# Usage: bench/membind.sh [CALLS]   (needs gcc, libhwloc-dev)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
calls="${1:-1000000}"
for p in wloc-capi wloc-discover; do
  cargo build --release -p $p >/dev/null 2>&1 || cargo build --release -p $p
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib"
ln -s "$(realpath "$target/release/libhwloc.so")" "$tmp/lib/libhwloc.so.15"
gcc -O2 -o "$tmp/membind_queries" bench/capi/membind_queries.c -lhwloc
python3 - "$tmp" "$calls" <<'PY'
import os, statistics, subprocess, sys
tmp, calls = sys.argv[1], sys.argv[2]
prog = os.path.join(tmp, "membind_queries")
base = {k: v for k, v in os.environ.items() if not k.startswith(("HWLOC_", "WLOC_", "LD_LIBRARY_PATH"))}
libs = {"libhwloc": {}, "wloc": {"LD_LIBRARY_PATH": os.path.join(tmp, "lib")}}
times = {name: ([], []) for name in libs}
for _ in range(5):
    for name, env in libs.items():
        out = subprocess.run([prog, calls], env={**base, **env}, check=True,
                             capture_output=True, text=True).stdout.split()
        times[name][0].append(float(out[0]))
        times[name][1].append(float(out[1]))
print(f"{calls} calls each, medians of 5 runs (seconds)")
print(f"{'':24} {'libhwloc':>10} {'wloc':>10} {'ratio':>7}")
for i, what in enumerate(["hwloc_get_membind", "hwloc_get_area_membind"]):
    a = statistics.median(times["libhwloc"][i])
    b = statistics.median(times["wloc"][i])
    print(f"{what:24} {a:10.3f} {b:10.3f} {b / a:7.2f}")
PY
