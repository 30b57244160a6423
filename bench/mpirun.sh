#!/usr/bin/env bash
# Open MPI 4.1 job start-up on wloc's libhwloc.so.15 against Debian's
# libhwloc 2.9: `mpirun --oversubscribe -np 64` of the smallest MPI
# program (bench/mpirun/hello.c) on this machine.
#
# What is measured, per job: the CPU time of the job's topology loads,
# summed over every process of the job (mpirun and its 64 ranks).  An
# interposer preloaded in each process (bench/mpirun/loadtime.c) adds up
# the process CPU time (CLOCK_PROCESS_CPUTIME_ID, all threads) spent
# inside hwloc_topology_init, hwloc_topology_load and
# hwloc_shmem_topology_adopt, whichever library answers them; libhwloc
# loads its plugins in hwloc_topology_init, wloc's library starts its
# discovery module in hwloc_topology_load.  Also the whole job's CPU time
# (user + system of mpirun and all it started, from wait4) and wall time.
#
# Rows: libhwloc (plugins as Debian ships them), libhwloc without plugins
# (HWLOC_PLUGINS_PATH naming an empty folder), wloc discovering, and wloc
# with WLOC_IMAGE naming this machine's image (`wloc ls --of image`):
# mpirun and every rank adopt it.  RUNS jobs per row (default 5),
# alternating the rows, medians.
#
# Usage: bench/mpirun.sh [RUNS]   (needs openmpi-bin, libopenmpi-dev, gcc)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
target="${CARGO_TARGET_DIR:-target}"
for p in wloc-capi wloc-discover wloc; do
  cargo build --release -p $p >/dev/null 2>&1 || cargo build --release -p $p
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib" "$tmp/noplugins"
# The library finds its discovery module beside its real file.
ln -s "$(realpath "$target/release/libhwloc.so")" "$tmp/lib/libhwloc.so.15"
gcc -O2 -Wall -shared -fPIC -o "$tmp/libloadtime.so" bench/mpirun/loadtime.c -ldl
mpicc -O2 -o "$tmp/hello" bench/mpirun/hello.c
"$target/release/wloc" ls --of image "$tmp/this.img"
python3 - "$tmp" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
tmp, runs = sys.argv[1], int(sys.argv[2])
base = {k: v for k, v in os.environ.items()
        if not k.startswith(("HWLOC_", "WLOC_", "LD_LIBRARY_PATH", "LD_PRELOAD", "OMPI_"))}
base.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
rows = {
    "libhwloc": {},
    "libhwloc, no plugins": {"HWLOC_PLUGINS_PATH": os.path.join(tmp, "noplugins")},
    "wloc, discovering": {"LD_LIBRARY_PATH": os.path.join(tmp, "lib")},
    "wloc, WLOC_IMAGE": {"LD_LIBRARY_PATH": os.path.join(tmp, "lib"),
                         "WLOC_IMAGE": os.path.join(tmp, "this.img")},
}
def job(env):
    out = os.path.join(tmp, "loads")
    subprocess.run(["rm", "-rf", out], check=True)
    os.mkdir(out)
    env = {**base, **env, "LD_PRELOAD": os.path.join(tmp, "libloadtime.so"), "LOADTIME_DIR": out}
    t = time.perf_counter()
    p = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "64", os.path.join(tmp, "hello")],
                         env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"mpirun failed ({status}) with {env}")
    procs, load_ns = 0, 0
    for f in os.listdir(out):
        pid, init, load, adopt, calls = open(os.path.join(out, f)).read().split()
        procs += 1
        load_ns += int(init) + int(load) + int(adopt)
    if procs != 65:
        sys.exit(f"{procs} processes loaded a topology, not 65 (mpirun and 64 ranks)")
    return load_ns / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3, wall * 1e3
res = {r: [] for r in rows}
for _ in range(runs):
    for r, env in rows.items():
        res[r].append(job(env))
med = {r: [statistics.median(x[i] for x in v) for i in range(3)] for r, v in res.items()}
print(f"{'mpirun -np 64 (' + str(runs) + ' jobs)':34} {'topology loads, CPU ms':>22} {'job CPU ms':>11} {'job wall ms':>12}")
for r, (l, c, w) in med.items():
    print(f"{r:34} {l:22.1f} {c:11.0f} {w:12.0f}")
for ref in ("libhwloc", "libhwloc, no plugins"):
    l, c, w = med["wloc, WLOC_IMAGE"]
    print(f"{'wloc image / ' + ref:34} {l / med[ref][0]:22.3f} {c / med[ref][1]:11.2f} {w / med[ref][2]:12.2f}")
PY
