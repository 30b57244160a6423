#!/usr/bin/env bash
# Side-by-side benchmark of Linux discovery: whole-process time of
# `wloc ls --of xml` and hwloc's `lstopo-no-graphics --of xml`, in the same
# run, on this machine, on the three largest recorded sysfs trees and on
# the two recorded machines with the most PUs.
# Prints each pair and the wloc/hwloc ratio of medians.
#
# Usage: bench/linux-discovery.sh        (needs hyperfine and hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
wloc="${WLOC:-target/release/wloc}"
[ -x "$wloc" ] || cargo build --release -p wloc >/dev/null
conf=tests/data/conformance/linux
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
runs="${RUNS:-30}"

compare() { # name, wloc command, hwloc command
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/h.json" \
    -n wloc "$2" -n hwloc "$3" >/dev/null 2>&1
  python3 - "$tmp/h.json" "$1" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
w, h = r["wloc"]["median"], r["hwloc"]["median"]
print(f"{sys.argv[2]:34s} wloc {w*1e3:7.2f} ms   hwloc {h*1e3:7.2f} ms   ratio {w/h:.2f}")
PY
}

compare "this machine" "$wloc ls --of xml -" "lstopo-no-graphics --of xml -"
largest_files=$(ls -S "$conf"/*.tar.bz2 | head -3)
# Recording names start with the machine's PU count.
most_pus=$(ls "$conf"/*.tar.bz2 | awk -F/ '{print $NF, $0}' | sort -rn | head -2 | cut -d' ' -f2)
for tarball in $largest_files $most_pus; do
  name=$(basename "$tarball" .tar.bz2)
  mkdir -p "$tmp/$name" && tar xjf "$tarball" -C "$tmp/$name"
  root=$(find "$tmp/$name" -mindepth 1 -maxdepth 1 -type d | head -1)
  compare "$name" \
    "$wloc ls -i $root --if fsroot --of xml -" \
    "env HWLOC_COMPONENTS=linux,stop HWLOC_FSROOT=$root lstopo-no-graphics --of xml -"
done
