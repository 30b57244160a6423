#!/usr/bin/env bash
# Side-by-side benchmark of memory-binding queries, as a binding's test
# suite makes them: 1,000,000 hwloc_get_membind and 1,000,000
# hwloc_get_area_membind calls (bench/capi/membind_queries.c) on wloc's
# libhwloc.so.15 and on Debian's libhwloc 2.9, in the same run,
# alternating the libraries, 7 runs each, every run on CPU 0 (so that
# both are timed on the same core); the best and the median run of each
# and their ratios (wloc / libhwloc; the target is at most 1).
# host/capi/tests/membind_speed.rs makes the same comparison (best runs)
# in the test command.
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
for _ in range(7):
    for name, env in libs.items():
        out = subprocess.run(["taskset", "-c", "0", prog, calls], env={**base, **env}, check=True,
                             capture_output=True, text=True).stdout.split()
        times[name][0].append(float(out[0]))
        times[name][1].append(float(out[1]))
print(f"{calls} calls each, 7 runs on CPU 0 (seconds): best, then median")
print(f"{'':32} {'libhwloc':>10} {'wloc':>10} {'ratio':>7}")
for i, what in enumerate(["hwloc_get_membind", "hwloc_get_area_membind"]):
    for pick in (min, statistics.median):
        a = pick(times["libhwloc"][i])
        b = pick(times["wloc"][i])
        print(f"{what + ' ' + pick.__name__:32} {a:10.3f} {b:10.3f} {b / a:7.2f}")
PY
