#!/usr/bin/env python3
"""Generate a cluster of N node topologies (hwloc 2 XML) from a corpus of
real ones, as a cluster's per-node files differ: every node has its own
hostname, NIC MAC addresses, InfiniBand GUIDs, LID and cgroup; about one
node in 50 has a disabled core (the topology restricted without it, as
hwloc's --restrict makes it); about one in 20 has a different memory size
on one NUMA node (with its 4 KiB page count to match).

usage: gen-cluster.py CORPUS_DIR N OUT_DIR [SEED]

The disabled-core variants are made once per corpus file and core with
hwloc 2.9 (hwloc-calc and lstopo-no-graphics --restrict); everything else
is text substitution, so that 10,000 nodes take seconds.
"""
import os
import random
import re
import subprocess
import sys


def restricted_variants(path, count, rng):
    """Up to `count` variants of `path` with one core disabled."""
    cores = subprocess.run(
        ["hwloc-calc", "--input", path, "--number-of", "core", "all"],
        capture_output=True, text=True, check=True).stdout.strip()
    ncores = int(cores or 0)
    out = []
    for k in rng.sample(range(ncores), min(count, ncores)):
        cpuset = subprocess.run(
            ["hwloc-calc", "--input", path, "all", "~core:%d" % k],
            capture_output=True, text=True, check=True).stdout.strip()
        xml = subprocess.run(
            ["lstopo-no-graphics", "--input", path, "--restrict", cpuset,
             "--of", "xml", "-"],
            capture_output=True, text=True, check=True).stdout
        out.append(xml)
    return out


def hexbytes(rng, n):
    return ["%02x" % rng.randrange(256) for _ in range(n)]


def personalise(text, i, rng):
    host = "gen%05d" % i
    text = re.sub(r'(<info name="HostName" value=")[^"]*"', r'\g<1>%s"' % host, text)
    text = re.sub(r'(<info name="LinuxCgroup" value=")[^"]*"',
                  r'\g<1>/slurm/job%d"' % rng.randrange(10**6), text)
    # A NIC's MAC: keep its vendor prefix, give it its own last bytes;
    # the second port of a card is the next address, as on real boards.
    base = hexbytes(rng, 3)

    def mac(m):
        parts = m.group(2).split(":")
        if len(parts) == 6:
            last = (int(base[2], 16) + int(parts[5], 16)) % 256
            parts[3:] = [base[0], base[1], "%02x" % last]
        else:  # IPoIB: 20 bytes, the GUID in the last 8
            parts[-3:] = base
        return m.group(1) + ":".join(parts) + '"'

    text = re.sub(r'(<info name="Address" value=")([0-9a-fA-F:]+)"', mac, text)
    guid = "%04x:%04x" % (rng.randrange(1 << 16), rng.randrange(1 << 16))
    text = re.sub(r'(<info name="(?:NodeGUID|SysImageGUID)" value="[0-9a-f]{4}:[0-9a-f]{4}:)[0-9a-f]{4}:[0-9a-f]{4}"',
                  r'\g<1>%s"' % guid, text)
    text = re.sub(r'(<info name="Port1GID0" value="(?:[0-9a-f]{4}:){6})[0-9a-f]{4}:[0-9a-f]{4}"',
                  r'\g<1>%s"' % guid, text)
    text = re.sub(r'(<info name="Port1LID" value=")[^"]*"', r'\g<1>0x%x"' % (i % 60000 + 1), text)
    return text


def change_memory(text, rng):
    """Take 4 GiB off one NUMA node, and its 4 KiB pages to match."""
    nodes = [m for m in re.finditer(r'local_memory="(\d+)"', text)]
    if not nodes:
        return text
    m = rng.choice(nodes)
    mem = int(m.group(1))
    less = 4 << 30
    if mem <= 2 * less:
        return text
    text = text[:m.start(1)] + str(mem - less) + text[m.end(1):]
    p = re.compile(r'<page_type size="4096" count="(\d+)"/>')
    pm = p.search(text, m.end())
    if pm and int(pm.group(1)) >= less // 4096:
        text = text[:pm.start(1)] + str(int(pm.group(1)) - less // 4096) + text[pm.end(1):]
    return text


def main():
    corpus, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    os.makedirs(out, exist_ok=True)
    files = sorted(f for f in os.listdir(corpus) if f.endswith(".xml"))
    bases = [open(os.path.join(corpus, f)).read() for f in files]
    variants = [restricted_variants(os.path.join(corpus, f), 3, rng) for f in files]
    for i in range(n):
        b = i % len(bases)
        text = bases[b]
        if rng.random() < 0.02 and variants[b]:
            text = rng.choice(variants[b])
        if rng.random() < 0.05:
            text = change_memory(text, rng)
        text = personalise(text, i, rng)
        with open(os.path.join(out, "gen%05d.xml" % i), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
