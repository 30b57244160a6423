#!/usr/bin/env bash
# Side-by-side benchmark of wloc's libhwloc.so.15 against Debian's
# libhwloc 2.9, as whole processes: a C program that loads a topology,
# asks one question (the number of PUs) and exits (bench/capi/load_query.c),
# started 40 times per configuration, alternating the libraries; medians of
# the wall time and of the peak resident memory.
#
# Configurations: this machine discovered; HWLOC_XMLFILE with the 192-PU
# conformance case and a 4096-PU machine (both as hwloc 2 XML, which both
# libraries read); WLOC_IMAGE (wloc's library adopts the image; libhwloc
# has no image, its row is its discovery of this machine).  libhwloc runs
# with its plugins as Debian ships them and with HWLOC_PLUGINS_PATH naming
# an empty folder.
#
# Usage: bench/capi.sh   (needs gcc, libhwloc-dev, hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
for p in wloc-capi wloc-discover wloc; do
  cargo build --release -p $p >/dev/null 2>&1 || cargo build --release -p $p
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib" "$tmp/noplugins"
# The library finds its discovery module beside its real file
# (target/release/libwloc_discover.so).
ln -s "$(realpath "$target/release/libhwloc.so")" "$tmp/lib/libhwloc.so.15"
gcc -O2 -o "$tmp/load_query" bench/capi/load_query.c -lhwloc
wloc="$target/release/wloc"
"$wloc" ls -i tests/data/conformance/xml/192em64t-12gr2n8c2t.xml --of xml > "$tmp/192.xml"
"$wloc" ls -i "pack:16 [numa] core:128 pu:2" --of xml > "$tmp/4096.xml"
"$wloc" ls --of image "$tmp/this.img"
python3 - "$tmp" <<'PY'
import os, statistics, subprocess, sys, time
tmp = sys.argv[1]
prog = os.path.join(tmp, "load_query")
base = {k: v for k, v in os.environ.items() if not k.startswith(("HWLOC_", "WLOC_", "LD_LIBRARY_PATH"))}
libs = {
    "libhwloc": {},
    "libhwloc (no plugins)": {"HWLOC_PLUGINS_PATH": os.path.join(tmp, "noplugins")},
    "wloc": {"LD_LIBRARY_PATH": os.path.join(tmp, "lib")},
}
cases = {
    "this machine": {},
    "XML 192 PUs": {"HWLOC_XMLFILE": os.path.join(tmp, "192.xml")},
    "XML 4096 PUs": {"HWLOC_XMLFILE": os.path.join(tmp, "4096.xml")},
    "image (wloc) / discovery (libhwloc)": {"WLOC_IMAGE": os.path.join(tmp, "this.img")},
}
def run(env):
    t = time.perf_counter()
    out = subprocess.run([prog], env=env, capture_output=True, text=True, check=True).stdout.split()
    return time.perf_counter() - t, int(out[1])
print(f"{'case':38} {'library':22} {'wall ms':>8} {'RSS KiB':>8}")
for case, cenv in cases.items():
    res = {lib: ([], []) for lib in libs}
    for _ in range(40):
        for lib, lenv in libs.items():
            w, r = run({**base, **cenv, **lenv})
            res[lib][0].append(w); res[lib][1].append(r)
    med = {lib: (statistics.median(w) * 1000, statistics.median(r)) for lib, (w, r) in res.items()}
    for lib, (w, r) in med.items():
        print(f"{case:38} {lib:22} {w:8.2f} {r:8.0f}")
    for ref in ("libhwloc", "libhwloc (no plugins)"):
        print(f"{case:38} {'wloc / ' + ref:22} {med['wloc'][0] / med[ref][0]:8.2f} {med['wloc'][1] / med[ref][1]:8.2f}")
PY
