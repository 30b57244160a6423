#!/usr/bin/env bash
# Side-by-side benchmark of many-topology compression, in one run on the
# same inputs: wloc compress-dir against hwloc 2.9's hwloc-compress-dir,
# both writing hwloc's layout (a folder of NAME.xml and NAME.diff.xml);
# wloc store pack (one store file with random access); and xz -9e of the
# whole set (no random access):
#
#  1. hwloc's own corpus (tests/data/cluster/test-hwloc-compress-dir.input,
#     21 nodes of one real cluster);
#  2. a generated cluster of N nodes (default 10,000) derived from it by
#     bench/gen-cluster.py (per-node hostnames, MACs, GUIDs, a disabled
#     core here and there, another memory size on some).
#
# Reports sizes as ratios (input bytes / output bytes), compression speed
# in nodes/s (wall and per CPU-second, with the load average: other jobs
# share the machine), the time to get one node out of the store (fresh open each
# time), and checks the round trip: `wloc ls --of xml` of every input
# (corpus) or of a sample of 200 (cluster) equals that of what
# uncompress-dir gives back. hwloc-compress-dir tries each file against
# every full file kept so far, which is slow on thousands of nodes: it is
# timed on the first HWLOC_SUBSET (default 500) generated nodes.
#
# Usage: bench/store.sh [N]   (needs hwloc 2.9, xz, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000}"
subset="${HWLOC_SUBSET:-500}"
wloc="${WLOC:-${CARGO_TARGET_DIR:-target}/release/wloc}"
[ -x "$wloc" ] || cargo build --release -p wloc >/dev/null
corpus_tgz="${CORPUS:-tests/data/cluster/test-hwloc-compress-dir.input.tar.gz}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
size() { du -sb "$1" | cut -f1; }
ratio() { python3 -c "print(f'{$1/$2:.1f}')"; }

roundtrip() { # IN_DIR BACK_DIR [SAMPLE]: compare `wloc ls --of xml` of both
  local bad=0 count=0
  for f in $(ls "$1" | sort | awk -v s="${3:-1}" 'NR % s == 0'); do
    for flags in 0 2; do  # 2: hwloc 2 XML, which has the page types
      cmp -s <("$wloc" ls -i "$1/$f" --if xml --of xml --export-xml-flags $flags -) <("$wloc" ls -i "$2/$f" --if xml --of xml --export-xml-flags $flags -) || { bad=$((bad+1)); echo "  differs: $f"; }
    done
    count=$((count+1))
  done
  echo "  round trip (wloc ls --of xml equal, v3 and v2): $((count*2-bad))/$((count*2))"
}

one() { # NAME IN_DIR
  local name=$1 in=$2 nodes in_bytes t0 t1
  nodes=$(ls "$in" | wc -l); in_bytes=$(size "$in")
  echo "== $name: $nodes nodes, $in_bytes bytes"
  mkdir -p "$tmp/$name.w" "$tmp/$name.back"
  # Compression is timed RUNS times (default 3) on sets of more than
  # 100 nodes: on a shared machine one run says little.
  local runs=1 r ws cpu; [ "$nodes" -gt 100 ] && runs="${RUNS:-3}"
  for r in $(seq "$runs"); do
    rm -f "$tmp/$name.w/topologies.wstore"
    local load0; load0=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(now); /usr/bin/time -f "%U %S" -o "$tmp/$name.cpu" "$wloc" store pack --output "$tmp/$name.w/topologies.wstore" "$in" 2>"$tmp/$name.log"; t1=$(now)
    ws=$(size "$tmp/$name.w/topologies.wstore"); cpu=$(awk '{print $1+$2}' "$tmp/$name.cpu")
    echo "  wloc store pack:     $ws bytes, ratio $(ratio "$in_bytes" "$ws")x, $(python3 -c "print(f'{$nodes/($t1-$t0):.0f}')") nodes/s wall ($(python3 -c "print(f'{$t1-$t0:.2f}')") s), $cpu s CPU ($(python3 -c "print(f'{$nodes/max($cpu,0.01):.0f}')") nodes per CPU-second; load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after)"
  done
  sed 's/^/    /' "$tmp/$name.log"
  t0=$(now); "$wloc" uncompress-dir "$tmp/$name.w/topologies.wstore" "$tmp/$name.back" 2>/dev/null; t1=$(now)
  echo "  wloc uncompress-dir: $(python3 -c "print(f'{$nodes/($t1-$t0):.0f}')") nodes/s"
  echo "  wloc store get: $("$wloc" store time "$tmp/$name.w/topologies.wstore" --samples 1000)"
  if [ "$nodes" -le 100 ]; then roundtrip "$in" "$tmp/$name.back"; else roundtrip "$in" "$tmp/$name.back" $((nodes / 200)); fi
}

hwloc_one() { # NAME IN_DIR
  local name=$1 in=$2 nodes in_bytes t0 t1 hs full
  nodes=$(ls "$in" | wc -l); in_bytes=$(size "$in")
  mkdir -p "$tmp/$name.h"
  t0=$(now); /usr/bin/time -f "%U %S" -o "$tmp/$name.hcpu" hwloc-compress-dir "$in" "$tmp/$name.h" >"$tmp/$name.hlog" 2>&1 || true; t1=$(now)
  local cpu; cpu=$(awk '{print $1+$2}' "$tmp/$name.hcpu")
  hs=$(size "$tmp/$name.h"); full=$(ls "$tmp/$name.h" | grep -vc '\.diff\.xml$' || true)
  echo "  hwloc-compress-dir on $nodes nodes: $hs bytes, ratio $(ratio "$in_bytes" "$hs")x, $(python3 -c "print(f'{$nodes/($t1-$t0):.0f}')") nodes/s wall, $cpu s CPU ($(python3 -c "print(f'{$nodes/max($cpu,0.01):.0f}')") nodes per CPU-second), $full files kept whole"
  # wloc compress-dir writes the same layout as hwloc-compress-dir.
  mkdir -p "$tmp/$name.wh"
  t0=$(now); /usr/bin/time -f "%U %S" -o "$tmp/$name.whcpu" "$wloc" compress-dir "$in" "$tmp/$name.wh" >/dev/null 2>&1 || true; t1=$(now)
  cpu=$(awk '{print $1+$2}' "$tmp/$name.whcpu")
  local whs whfull; whs=$(size "$tmp/$name.wh"); whfull=$(ls "$tmp/$name.wh" | grep -vc '\.diff\.xml$' || true)
  echo "  wloc compress-dir on $nodes nodes: $whs bytes, ratio $(ratio "$in_bytes" "$whs")x, $(python3 -c "print(f'{$nodes/($t1-$t0):.0f}')") nodes/s wall, $cpu s CPU, $whfull files kept whole; size ratio wloc/hwloc $(python3 -c "print(f'{$whs/$hs:.2f}')")"
  local xs; xs=$(tar -C "$in" -cf - . | xz -9e | wc -c)
  echo "  xz -9e of the whole set (tar): $xs bytes, ratio $(ratio "$in_bytes" "$xs")x"
}

echo "wloc $("$wloc" --version 2>/dev/null | head -1), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$tmp/corpus"; tar -C "$tmp/corpus" -xzf "$corpus_tgz"
corpus="$tmp/corpus/test-hwloc-compress-dir.input"
one corpus "$corpus"
hwloc_one corpus "$corpus"

python3 bench/gen-cluster.py "$corpus" "$n" "$tmp/cluster"
one cluster "$tmp/cluster"
mkdir -p "$tmp/subset"; for f in $(ls "$tmp/cluster" | sort | head -n "$subset"); do cp "$tmp/cluster/$f" "$tmp/subset/"; done
one subset "$tmp/subset"
hwloc_one subset "$tmp/subset"
