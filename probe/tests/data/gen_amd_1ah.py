# python3 gen_amd_1ah.py OUTDIR VARIANT
# Writes a hwloc-gather-cpuid dump of one package of an AMD family 1Ah
# (model 24h) processor with Zen 5 (core type 0) and Zen 5c (core type 1)
# complexes: leaves 0, 1, 7, 0x80000000-4, 0x80000008, 0x8000001D,
# 0x8000001E and 0x80000026 (0xB is not written: with 0x80000026, AMD
# topology does not read it).
#   ccx: AMD-1Ah-1die-2ccx, 4 Zen 5 (16 MB L3) + 8 Zen 5c (8 MB L3), one die
#   ccd: AMD-1Ah-2ccd, 8 Zen 5 (32 MB L3) + 16 Zen 5c (16 MB L3), two CCDs
#   ccd-nosock, ccx-nosock: the same without the socket level (not kept)
# PUs are numbered thread 0 of every core first, then thread 1.
import os, sys
out, variant = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
# (cores, apic base, L3 bytes, coretype)
if variant in ("ccd", "ccd-nosock"):
    groups = [(8, 0, 32 << 20, 0), (16, 32, 16 << 20, 1)]
    ccx_shift, die_shift, sock_shift = 5, 5, 6
else:  # one die, two CCX (Strix Point-like): 4 Zen5 + 8 Zen5c
    groups = [(4, 0, 16 << 20, 0), (8, 16, 8 << 20, 1)]
    ccx_shift, die_shift, sock_shift = 4, 5, 5
pus = []
for g, (n, base, l3, ct) in enumerate(groups):
    for t in range(2):
        for c in range(n):
            pus.append((base + 2 * c + t, g))
pus.sort(key=lambda p: (p[0] & 1, p[0]))  # threads 0 first, like Linux numbering
total = len(pus)
def w(s):
    b = s.encode(); return [int.from_bytes(b[i:i+4], "little") for i in range(0, 12, 4)]
brand = "AMD Test 1Ah Zen5+Zen5c".ljust(48, " ").encode()[:47] + b"\0"
for i, (apic, g) in enumerate(pus):
    n, base, l3, ct = groups[g]
    lps_ccx = 2 * n
    L = []
    def e(mask, leaf, sub, r): L.append("%x %x 0 %x 0 => %x %x %x %x" % (mask, leaf, sub, *r))
    v = w("AuthenticAMD")
    e(1, 0, 0, [0x10, v[0], v[2], v[1]])
    fms = 0x00B20F40  # family 0xF+0xB = 1Ah, model 24h
    e(1, 1, 0, [fms, (apic & 0xff) << 24 | total << 16 | 8 << 8, 0x7ef8320b | 1 << 21, 0x178bfbff])
    e(5, 7, 0, [1, 0xf1bf97a9, 0x405fce, 0x10000010])
    e(1, 0x80000000, 0, [0x80000028, v[0], v[2], v[1]])
    e(1, 0x80000001, 0, [fms, 0, 0x75c237ff, 0x2fd3fbff])  # ecx bit 22 TOPOEXT
    for k, leaf in enumerate((0x80000002, 0x80000003, 0x80000004)):
        r = [int.from_bytes(brand[16*k+4*j:16*k+4*j+4], "little") for j in range(4)]
        e(1, leaf, 0, r)
    # 0x80000008 ecx: NC = total-1, ApicIdSize = sock_shift
    e(1, 0x80000008, 0, [0x3030, 0, (sock_shift << 12) | (total - 1), 0])
    def cache(kind, level, sharing, ways, sets, incl=0, line=64):
        return [kind | level << 5 | 1 << 8 | (sharing - 1) << 14, (line - 1) | (ways - 1) << 22, sets - 1, incl]
    e(5, 0x8000001d, 0, cache(1, 1, 2, 12, 64))          # L1d 48K
    e(5, 0x8000001d, 1, cache(2, 1, 2, 8, 64))           # L1i 32K
    e(5, 0x8000001d, 2, cache(3, 2, 2, 16, 1024, 2))     # L2 1M inclusive
    e(5, 0x8000001d, 3, cache(3, 3, lps_ccx, 16, l3 // (64 * 16)))
    e(5, 0x8000001d, 4, [0, 0, 0, 0])
    e(1, 0x8000001e, 0, [apic, 1 << 8 | (apic >> 1), 0, 0])
    het = 1 << 30
    lv = [(1, 1, 2 | ct << 28), (ccx_shift, 2, lps_ccx), (die_shift, 3, lps_ccx if variant.startswith("ccd") else total)]
    if variant != "ccd-nosock" and variant != "ccx-nosock":
        lv.append((sock_shift, 4, total))
    for s, (shift, typ, ebx) in enumerate(lv):
        e(5, 0x80000026, s, [shift | het, ebx, typ << 8 | s, apic])
    e(5, 0x80000026, len(lv), [0, 0, len(lv), 0])
    open(os.path.join(out, "pu%d" % i), "w").write("# mask e[abcd]x => e[abcd]x\n" + "\n".join(L) + "\n")
open(os.path.join(out, "hwloc-cpuid-info"), "w").write("Architecture: x86\n")
