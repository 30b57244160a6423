#!/usr/bin/env bash
# Side-by-side benchmark of topology images against hwloc 2.9's shared-memory
# topologies and XML, on the largest XML conformance case (as hwloc 2 XML,
# which both read):
#
#  1. adopt in process (open, check, first query: the number of PUs), p50
#     of many rounds: wloc's image read privately and mapped from a sealed
#     memfd, hwloc's shmem adopt, hwloc's XML load (hwloc with
#     HWLOC_PLUGINS_PATH naming an empty directory);
#  2. 64 processes started at once, each printing one `calc` answer:
#     `wloc calc` from one image (WLOC_IMAGE), `hwloc-calc` discovering this
#     machine, `hwloc-calc -i` of the XML file: wall time and the summed
#     private memory of the processes at exit (Private_Clean +
#     Private_Dirty of /proc/self/smaps_rollup, read by an LD_PRELOADed
#     destructor); medians of 5 runs;
#  3. sizes: XML file, wloc image, hwloc shmem length.
#
# Usage: bench/image.sh [XML]   (needs gcc, libhwloc-dev, hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
xml_in="${1:-tests/data/conformance/xml/192em64t-12gr2n8c2t.xml}"
target="${CARGO_TARGET_DIR:-target}"
# (Two builds: `--example` alone would build the example and not the command.)
for args in "-p wloc" "-p wloc-image --example adopt_timing"; do
  # shellcheck disable=SC2086
  cargo build --release $args >/dev/null 2>&1 || cargo build --release $args
done
wloc="$target/release/wloc"
timing="$target/release/examples/adopt_timing"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/noplugins"
gcc -O2 -o "$tmp/hwloc_shmem" bench/image/hwloc_shmem.c -lhwloc
gcc -O2 -shared -fPIC -o "$tmp/private_mem.so" bench/image/private_mem.c

# The same topology for both: the case as hwloc 2 XML with every object.
"$wloc" ls -i "$xml_in" --of xml --export-xml-flags 2 --whole-io > "$tmp/topo.xml"
"$wloc" ls -i "$tmp/topo.xml" --whole-io --of image "$tmp/topo.img"
read -r addr len < <(HWLOC_PLUGINS_PATH="$tmp/noplugins" "$tmp/hwloc_shmem" write "$tmp/topo.xml" "$tmp/topo.shmem")

echo "== topology: $(basename "$xml_in") ($(grep -c '<object' "$tmp/topo.xml") objects)"
xml_size=$(stat -c %s "$xml_in"); xml2_size=$(stat -c %s "$tmp/topo.xml")
img_size=$(stat -c %s "$tmp/topo.img")
echo "sizes: XML file $xml_size B, as hwloc 2 XML $xml2_size B, wloc image $img_size B, hwloc shmem $len B"
awk -v i="$img_size" -v x="$xml_size" -v x2="$xml2_size" -v s="$len" 'BEGIN {
  printf "image/XML %.2f (image/v2 XML %.2f), hwloc shmem/XML %.2f, image/hwloc shmem %.2f\n", i/x, i/x2, s/x, i/s }'

echo "== adopt in process (open, check, first query); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$timing" "$tmp/topo.img" 5000 | tee "$tmp/wloc.adopt"
HWLOC_PLUGINS_PATH="$tmp/noplugins" "$tmp/hwloc_shmem" adopt "$tmp/topo.shmem" "$addr" "$len" 5000 | tee "$tmp/hwloc.adopt"
HWLOC_PLUGINS_PATH="$tmp/noplugins" "$tmp/hwloc_shmem" xml "$tmp/topo.xml" 300 | tee "$tmp/hwloc.xml"
p50() { awk -v w="$2" '$1 == w { for (i = 1; i <= NF; i++) if ($i == "p50") print $(i+1) }' "$1"; }
w=$(p50 "$tmp/wloc.adopt" read); wm=$(p50 "$tmp/wloc.adopt" memfd)
h=$(p50 "$tmp/hwloc.adopt" hwloc-shmem-adopt); hx=$(p50 "$tmp/hwloc.xml" hwloc-xml-load)
awk -v w="$w" -v wm="$wm" -v h="$h" -v hx="$hx" 'BEGIN {
  printf "p50 ratios: wloc read / hwloc shmem %.2f, wloc memfd / hwloc shmem %.2f, wloc read / hwloc XML load %.3f\n", w/h, wm/h, w/hx }'

echo "== 64 processes at once, one calc answer each (median of 5 runs)"
python3 - "$wloc" "$tmp" <<'PY'
import os, statistics, subprocess, sys, time
wloc, tmp = sys.argv[1], sys.argv[2]
img, xml = os.path.join(tmp, "topo.img"), os.path.join(tmp, "topo.xml")
runs = {
    "wloc calc, WLOC_IMAGE": ([wloc, "calc", "core:3"], {"WLOC_IMAGE": img}),
    "hwloc-calc, discovering": (["hwloc-calc", "core:3"], {}),
    "hwloc-calc -i XML": (["hwloc-calc", "-i", xml, "core:3"], {}),
}
res = {}
for name, (cmd, extra) in runs.items():
    walls, mems = [], []
    for r in range(5):
        out = os.path.join(tmp, f"mem-{len(res)}-{r}")
        env = dict(os.environ, LD_PRELOAD=os.path.join(tmp, "private_mem.so"), PRIVATE_MEM_OUT=out, **extra)
        t0 = time.perf_counter()
        ps = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(64)]
        outs = [p.communicate() for p in ps]
        walls.append(time.perf_counter() - t0)
        if any(p.returncode for p in ps):
            sys.exit(f"{name}: a process failed: {outs[0][1].decode()}")
        answers = {o[0] for o in outs}
        if len(answers) != 1:
            sys.exit(f"{name}: processes disagree")
        kb = [int(l) for l in open(out)]
        if len(kb) != 64:
            sys.exit(f"{name}: {len(kb)} memory reports instead of 64")
        mems.append(sum(kb))
    res[name] = (statistics.median(walls), statistics.median(mems))
    print(f"{name}: wall {res[name][0]*1000:.0f} ms, private memory {res[name][1]/1024:.1f} MiB in total ({res[name][1]/64:.0f} kB per process)")
w = res["wloc calc, WLOC_IMAGE"]
for other in ["hwloc-calc, discovering", "hwloc-calc -i XML"]:
    o = res[other]
    print(f"wloc / {other}: wall {w[0]/o[0]:.2f}, private memory {w[1]/o[1]:.2f}")
PY
