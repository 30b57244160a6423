#!/usr/bin/env bash
# Side-by-side benchmark: placing 10,000 threads on a 4096-PU synthetic
# machine, the whole process each time.  wloc computes the OpenMP
# placement `KMP_AFFINITY=granularity=fine,scatter` (and compact) with
# `wloc place`; hwloc distributes as many single-PU sets over the same
# machine with `hwloc-distrib --single`.  Both print one set per thread.
# Prints the timings and the wloc/hwloc ratios of the medians.
#
# Usage: bench/place.sh ["DESCRIPTION"] [THREADS]   (needs hyperfine and hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
desc="${1:-pack:4 [numa] l3:2 core:32 pu:16}"
threads="${2:-10000}"
WLOC="${WLOC:-${CARGO_TARGET_DIR:-target}/release/wloc}"
cargo build -q --release -p wloc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scatter="$WLOC place -i '$desc' --threads $threads --kmp-affinity granularity=fine,scatter"
compact="$WLOC place -i '$desc' --threads $threads --kmp-affinity granularity=fine,compact"
hwloc="hwloc-distrib -i '$desc' --single $threads"
eval "$scatter" >"$tmp/scatter"
eval "$compact" >"$tmp/compact"
eval "$hwloc" >"$tmp/hwloc"
pus=$(lstopo-no-graphics -i "$desc" --only pu | wc -l)
for f in scatter compact hwloc; do
  n=$(wc -l <"$tmp/$f")
  if [ "$n" -ne "$threads" ]; then
    echo "$f printed $n sets, expected $threads" >&2
    exit 1
  fi
done
# Every PU is used by the spreading placements.
used=$(cut -d' ' -f2 "$tmp/scatter" | sort -u | wc -l)
if [ "$used" -ne "$pus" ]; then
  echo "scatter used $used PUs of $pus" >&2
  exit 1
fi
hyperfine -N --warmup 3 --runs "${RUNS:-30}" --export-json "$tmp/h.json" \
  -n scatter "$scatter" -n compact "$compact" -n hwloc "$hwloc" >/dev/null
python3 - "$tmp/h.json" "$desc" "$pus" "$threads" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
print(f"input: {sys.argv[2]} ({sys.argv[3]} PUs), {sys.argv[4]} threads")
for name, key in (("wloc place, scatter", "scatter"),
                  ("wloc place, compact", "compact"),
                  ("hwloc-distrib --single", "hwloc")):
    x = r[key]
    print(f"  {name:24s} mean {x['mean']*1e3:7.2f} ms  median {x['median']*1e3:7.2f} ms  (n={len(x['times'])})")
h = r["hwloc"]["median"]
print(f"  ratio wloc scatter/hwloc (median): {r['scatter']['median']/h:.2f}")
print(f"  ratio wloc compact/hwloc (median): {r['compact']['median']/h:.2f}")
PY
