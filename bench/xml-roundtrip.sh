#!/usr/bin/env bash
# Side-by-side benchmark: load the largest conformance XML topology and export
# it again as XML, with wloc and with hwloc's lstopo-no-graphics, in the same
# run on the same input. Prints both timings and the wloc/hwloc ratio.
#
# hwloc 2.9 cannot read hwloc 3.0 XML, so both tools read the same hwloc 2
# export of the case (made by wloc and checked by hwloc_differential).
#
# Usage: bench/xml-roundtrip.sh [CASE.xml]   (needs hyperfine and hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
case_file="${1:-tests/data/conformance/xml/192em64t-12gr2n8c2t.xml}"
wloc="${WLOC:-target/release/wloc}"
[ -x "$wloc" ] || cargo build --release -p wloc >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$wloc" ls -i "$case_file" --if xml --of xml --export-xml-flags 2 --whole-io "$tmp/in.xml"
hyperfine -N --warmup 5 --runs "${RUNS:-40}" --export-json "$tmp/h.json" \
  -n wloc "$wloc ls -i $tmp/in.xml --if xml --of xml --whole-io -" \
  -n hwloc "lstopo-no-graphics -i $tmp/in.xml --if xml --of xml --whole-io -" >/dev/null
python3 - "$tmp/h.json" "$case_file" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
w, h = r["wloc"], r["hwloc"]
print(f"input: {sys.argv[2]}")
for name, x in (("wloc", w), ("hwloc lstopo-no-graphics", h)):
    print(f"  {name:26s} mean {x['mean']*1e3:7.2f} ms  median {x['median']*1e3:7.2f} ms  (n={len(x['times'])})")
print(f"  ratio wloc/hwloc (median): {w['median']/h['median']:.2f}")
PY
