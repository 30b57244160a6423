#!/usr/bin/env bash
# Side-by-side benchmark of the location language: 1,000 `calc` expressions
# evaluated by wloc and by hwloc-calc 2.9 on the same synthetic machine.
#
#  1. one process each, the 1,000 expressions on standard input (one per
#     line): measures parsing and evaluation;
#  2. single invocations (`core:2-3` and a hierarchical location with
#     --largest): measures the fixed cost of a command.
#
# Prints the timings and the wloc/hwloc ratios (medians of hyperfine).
# Usage: bench/calc.sh ["SYNTHETIC DESCRIPTION"]   (needs hyperfine and hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
topo="${1:-pack:4 [numa] l3:2 core:8 pu:2}"
wloc="${WLOC:-target/release/wloc}"
[ -x "$wloc" ] || cargo build --release -p wloc >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/exprs" <<'PY'
import random, sys
r = random.Random(1234)
types = ["pu", "core", "pack", "numa", "l3"]
ranges = ["0", "1", "2-5", "3-", "all", "even", "odd", "1:3"]
ops = ["", "", "~", "x", "^"]
with open(sys.argv[1], "w") as f:
    for _ in range(1000):
        words = []
        for k in range(r.randint(1, 3)):
            op = "" if k == 0 else r.choice(ops)
            if r.random() < 0.2:
                words.append(f"{op}pack:{r.randint(0,3)}.core:{r.choice(ranges)}")
            elif r.random() < 0.1:
                words.append(f"0x{r.getrandbits(32):x}")
            else:
                words.append(f"{op}{r.choice(types)}:{r.choice(ranges)}")
        f.write(" ".join(words) + "\n")
PY
# Both must agree before being timed.
"$wloc" calc -i "$topo" --if synthetic < "$tmp/exprs" > "$tmp/w.out" 2>/dev/null
hwloc-calc -i "$topo" --if synthetic < "$tmp/exprs" > "$tmp/h.out" 2>/dev/null
cmp -s "$tmp/w.out" "$tmp/h.out" || { echo "outputs differ on the 1,000 expressions" >&2; exit 1; }
hyperfine --warmup 3 --runs "${RUNS:-20}" --export-json "$tmp/stdin.json" \
  -n wloc "$wloc calc -i '$topo' --if synthetic < $tmp/exprs > /dev/null 2>&1" \
  -n hwloc "hwloc-calc -i '$topo' --if synthetic < $tmp/exprs > /dev/null 2>&1" >/dev/null
# Without a shell (-N): these commands take a few milliseconds, below what
# hyperfine can correct for a shell's own start.
hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-json "$tmp/single.json" \
  -n wloc "$wloc calc -i '$topo' --if synthetic core:2-3" \
  -n hwloc "hwloc-calc -i '$topo' --if synthetic core:2-3" >/dev/null
hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-json "$tmp/largest.json" \
  -n wloc "$wloc calc -i '$topo' --if synthetic --largest pack:1.core:2-7 numa:3" \
  -n hwloc "hwloc-calc -i '$topo' --if synthetic --largest pack:1.core:2-7 numa:3" >/dev/null
python3 - "$topo" "$tmp/stdin.json" "$tmp/single.json" "$tmp/largest.json" <<'PY'
import json, sys
print(f"topology: {sys.argv[1]}")
for label, path in (("1,000 expressions on stdin", sys.argv[2]),
                    ("single core:2-3", sys.argv[3]),
                    ("single --largest", sys.argv[4])):
    r = {x["command"]: x for x in json.load(open(path))["results"]}
    w, h = r["wloc"], r["hwloc"]
    print(f"{label}:")
    for name, x in (("wloc calc", w), ("hwloc-calc", h)):
        print(f"  {name:12s} mean {x['mean']*1e3:7.2f} ms  median {x['median']*1e3:7.2f} ms  (n={len(x['times'])})")
    print(f"  ratio wloc/hwloc (median): {w['median']/h['median']:.2f}")
PY
