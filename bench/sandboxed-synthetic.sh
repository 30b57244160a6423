#!/usr/bin/env bash
# Side-by-side benchmark: the whole process of discovering a 4096-PU
# synthetic machine and writing it as hwloc 2 XML, with wloc's sandboxed
# synthetic component (WebAssembly, with fuel, deadline and memory cap) and
# with hwloc's lstopo-no-graphics.  Prints the timings and the wloc/hwloc
# ratio, after checking that both tools write the same XML (hwloc's
# hwlocVersion and ProcessName infos aside).
#
# wloc side: `wloc ls -i DESC --of xml` when the runtime is wired into the
# `wloc` command (or WLOC=path/to/wloc is given); before that, the
# `wloc-sandboxed` example of host/runtime, built here, which also times
# wloc's native (unsandboxed) build of the same description.
# Warm-up runs fill the compiled cache (~/.cache/wloc), so timings are
# warm-cache: the first run of a new component compiles it (0.3-0.8 s).
#
# Usage: bench/sandboxed-synthetic.sh ["DESCRIPTION"]   (needs hyperfine and hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
desc="${1:-pack:4 [numa(memory=64GB)] l3:4(size=32MB) core:32 l2:1(size=2MB) l1d:1(size=48KB) pu:8}"
if [ -z "${WLOC:-}" ] && [ ! -f host/runtime/examples/wloc-sandboxed.rs ]; then
  # The runtime is wired into `wloc`: synthetic input goes through it.
  WLOC="${CARGO_TARGET_DIR:-target}/release/wloc"
  cargo build -q --release -p wloc
fi
if [ -n "${WLOC:-}" ]; then
  sandboxed="$WLOC ls -i '$desc' --of xml --export-xml-flags 2"
  native=""
else
  # A target folder of its own (inside the ignored target/) until the
  # runtime is wired in, so that this build never waits on the main one.
  target="${CARGO_TARGET_DIR:-target/wloc-runtime}"
  CARGO_TARGET_DIR="$target" cargo build -q --release --features cli --example wloc-sandboxed \
    --manifest-path host/runtime/Cargo.toml
  bin="$target/release/examples/wloc-sandboxed"
  sandboxed="$bin -i '$desc' --export-xml-flags 2"
  native="$bin -i '$desc' --export-xml-flags 2 --native"
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lstopo-no-graphics -i "$desc" --of xml >"$tmp/hwloc.xml"
eval "$sandboxed" >"$tmp/wloc.xml"
grep -v -e 'name="hwlocVersion"' -e 'name="ProcessName"' "$tmp/hwloc.xml" >"$tmp/hwloc-trim.xml"
if ! cmp -s "$tmp/hwloc-trim.xml" "$tmp/wloc.xml"; then
  echo "wloc and hwloc disagree on $desc:" >&2
  diff "$tmp/hwloc-trim.xml" "$tmp/wloc.xml" | head -20 >&2
  exit 1
fi
pus=$(grep -c 'type="PU"' "$tmp/wloc.xml")
cmds=(-n sandboxed "$sandboxed")
[ -n "$native" ] && cmds+=(-n native "$native")
cmds+=(-n hwloc "lstopo-no-graphics -i '$desc' --of xml")
hyperfine -N --warmup 5 --runs "${RUNS:-40}" --export-json "$tmp/h.json" "${cmds[@]}" >/dev/null
python3 - "$tmp/h.json" "$desc" "$pus" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
print(f"input: {sys.argv[2]} ({sys.argv[3]} PUs), same XML from both tools")
for name, key in (("wloc, sandboxed component", "sandboxed"),
                  ("wloc, native build", "native"),
                  ("hwloc lstopo-no-graphics", "hwloc")):
    if key in r:
        x = r[key]
        print(f"  {name:26s} mean {x['mean']*1e3:7.2f} ms  median {x['median']*1e3:7.2f} ms  (n={len(x['times'])})")
h = r["hwloc"]["median"]
print(f"  ratio wloc sandboxed/hwloc (median): {r['sandboxed']['median']/h:.2f}")
if "native" in r:
    print(f"  ratio wloc native/hwloc (median): {r['native']['median']/h:.2f}")
PY
