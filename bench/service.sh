#!/usr/bin/env bash
# One discovery per node (issue 45), side by side in one run: N processes
# started at once (N = 1, 64, 256), each init/load/one query/destroy
# through libhwloc.so.15 (bench/capi/node_start.c):
#   - Debian's libhwloc 2.9, each process discovering;
#   - wloc's library, each process discovering (WLOC_NO_SERVICE=1);
#   - wloc's library adopting the image `wloc service --once` published.
# Reported per configuration: the wall time from the first start to the
# last exit, the CPU time of all processes (user + system, from wait4),
# and the sum of the time hwloc_topology_load took inside each; then the
# ratios wloc (published) / libhwloc.  The same for whole commands:
# `wloc calc`/`wloc info` against hwloc-calc/hwloc-info.  And on two large
# recorded machines (128 and 256 PUs, fsroot recordings of the
# conformance data): libhwloc discovering the recording (HWLOC_FSROOT)
# against wloc adopting an image of it (WLOC_IMAGE), so that the figures
# do not depend on this small machine.  Medians of 3 runs.
#
# Usage: bench/service.sh [N...]   (as root; needs gcc, libhwloc-dev, hwloc)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
for p in wloc-capi wloc-discover wloc; do
  cargo build --release -p $p >/dev/null 2>&1 || cargo build --release -p $p
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"; mkdir -m 755 "$tmp/lib" "$tmp/run" "$tmp/rec"
ln -s "$(realpath "$target/release/libhwloc.so")" "$tmp/lib/libhwloc.so.15"
gcc -O2 -o "$tmp/node_start" bench/capi/node_start.c -lhwloc
wloc="$(realpath "$target/release/wloc")"
WLOC_NO_SERVICE=1 "$wloc" service --once --path "$tmp/run/topology.img" 2>/dev/null
for m in 128ia64-17n4s2c 256ia64-64n2s2c; do
  tar xjf "tests/data/conformance/linux/$m.tar.bz2" -C "$tmp/rec"
  "$wloc" ls -i "$tmp/rec/$m" --if fsroot --of image "$tmp/rec/$m.img"
done
python3 - "$tmp" "$wloc" "${@:-1 64 256}" <<'PY'
import os, statistics, subprocess, sys, time
tmp, wloc = sys.argv[1], sys.argv[2]
counts = [int(n) for a in sys.argv[3:] for n in a.split()]
prog = os.path.join(tmp, "node_start")
base = {k: v for k, v in os.environ.items() if not k.startswith(("HWLOC_", "WLOC_", "LD_LIBRARY_PATH"))}
lib = {"LD_LIBRARY_PATH": os.path.join(tmp, "lib")}
published = {"WLOC_SERVICE_IMAGE": os.path.join(tmp, "run", "topology.img")}

def burst(argv, env, n):
    """n processes started at once: wall, CPU (sum), loads (sum)."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for _ in range(n)]
    cpu, loads = 0.0, 0.0
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        out = p.stdout.read().split()
        p.stdout.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{argv[0]} failed")
        cpu += ru.ru_utime + ru.ru_stime
        if argv[0] == prog and out:
            loads += float(out[0])
    return time.perf_counter() - t0, cpu, loads

def table(title, configs, n, ref, ours):
    res = {name: [] for name in configs}
    for _ in range(3):
        for name, (argv, env) in configs.items():
            res[name].append(burst(argv, env, n))
    med = {name: tuple(statistics.median(r[i] for r in rs) for i in range(3)) for name, rs in res.items()}
    for name, (w, c, l) in med.items():
        load = f"{l * 1000:10.1f}" if l else f"{'':>10}"
        print(f"{title:34} {n:4} {name:30} {w * 1000:9.1f} {c * 1000:9.1f} {load}")
    (w0, c0, l0), (w1, c1, l1) = med[ref], med[ours]
    lr = f"{l1 / l0:10.3f}" if l0 else f"{'':>10}"
    print(f"{title:34} {n:4} {'ratio ' + ours + ' / ' + ref:30} {w1 / w0:9.3f} {c1 / c0:9.3f} {lr}")

print(f"{'what':34} {'N':>4} {'configuration':30} {'wall ms':>9} {'CPU ms':>9} {'loads ms':>10}")
for n in counts:
    table("node start-up (C, libhwloc API)", {
        "libhwloc discovering": ([prog], base),
        "wloc discovering": ([prog], {**base, **lib, "WLOC_NO_SERVICE": "1"}),
        "wloc published": ([prog], {**base, **lib, **published}),
    }, n, "libhwloc discovering", "wloc published")
for n in counts:
    table("hwloc-calc --number-of pu all", {
        "hwloc-calc": (["hwloc-calc", "--number-of", "pu", "all"], base),
        "wloc calc published": ([wloc, "calc", "--number-of", "pu", "all"], {**base, **published}),
    }, n, "hwloc-calc", "wloc calc published")
    table("hwloc-info", {
        "hwloc-info": (["hwloc-info"], base),
        "wloc info published": ([wloc, "info"], {**base, **published}),
    }, n, "hwloc-info", "wloc info published")
for m in ["128ia64-17n4s2c", "256ia64-64n2s2c"]:
    rec = os.path.join(tmp, "rec", m)
    for n in counts:
        table(f"recorded {m}", {
            "libhwloc discovering": ([prog], {**base, "HWLOC_FSROOT": rec}),
            "wloc image": ([prog], {**base, **lib, "WLOC_IMAGE": rec + ".img"}),
        }, n, "libhwloc discovering", "wloc image")
PY
