#!/usr/bin/env bash
# In-process benchmark: wloc against libhwloc 2 (plugins disabled) loading
# the same hwloc 2 XML documents and synthetic descriptions, and answering
# the same queries on finished topologies, in one run (criterion, median
# times).  Prints a markdown table: wloc, libhwloc, time ratio, and the heap
# bytes held by each loaded topology (glibc's mallinfo2 for both sides).
#
# Usage: bench/inproc.sh [criterion filter]   (needs libhwloc-dev)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -e /usr/include/hwloc.h ]; then
  echo "bench/inproc.sh needs libhwloc's headers: apt-get install libhwloc-dev" >&2
  exit 1
fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$target/criterion/load" "$target"/criterion/query-*
WLOC_BENCH_HEAP_OUT="$tmp/heap.json" cargo bench -q -p wloc-bench-inproc --bench inproc -- "$@" >&2
python3 - "$target/criterion" "$tmp/heap.json" <<'PY'
import json, os, sys
crit, heap = sys.argv[1], json.load(open(sys.argv[2]))

def median(group, side, ident):
    p = os.path.join(crit, group, side, ident, "new", "estimates.json")
    if not os.path.exists(p):
        return None
    return json.load(open(p))["median"]["point_estimate"]  # ns

def t(ns):
    if ns >= 1e6: return f"{ns/1e6:.2f} ms"
    if ns >= 1e3: return f"{ns/1e3:.1f} µs"
    return f"{ns:.0f} ns"

def kb(b):
    return f"{b/1e6:.2f} MB" if b >= 1e6 else f"{b/1e3:.0f} KB"

print("| load | wloc | libhwloc | time ratio | heap wloc | heap libhwloc | heap ratio | wloc allocations |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for r in heap:
    if r["group"] != "load":
        continue
    w, h = median("load", "wloc", r["id"]), median("load", "hwloc", r["id"])
    if w is None or h is None:
        continue
    print(f"| {r['name']} | {t(w)} | {t(h)} | {w/h:.2f} | {kb(r['wloc_heap'])} | {kb(r['hwloc_heap'])} | {r['wloc_heap']/r['hwloc_heap']:.2f} | {r['wloc_allocs']} |")
print()
print("| query (whole loop) | topology | wloc | libhwloc | time ratio |")
print("| --- | --- | --- | --- | --- |")
for r in heap:
    if not r["group"].startswith("query-"):
        continue
    w, h = median(r["group"], "wloc", r["id"]), median(r["group"], "hwloc", r["id"])
    if w is None or h is None:
        continue
    print(f"| {r['name']} | {t(w)} | {t(h)} | {w/h:.2f} |")
PY
