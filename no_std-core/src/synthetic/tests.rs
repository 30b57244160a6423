//! Parsing, building and export, properties, and a comparison with hwloc.

extern crate std;

use super::*;
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::{CacheKind, ObjType, Object, group_kind};
use crate::topology::Topology;
use crate::topology::TypeFilter;
use alloc::string::ToString;
use alloc::vec;
use proptest::prelude::*;
use std::collections::BTreeMap;

type K = SyntheticErrorKind;

/// A topology with lstopo's filters: everything kept but I/O and Misc.
fn lstopo_topology() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepNone);
    let _ = t.set_type_filter(ObjType::Misc, TypeFilter::KeepNone);
    t
}

fn build(desc: &str) -> Topology {
    let d = parse(desc).unwrap_or_else(|e| panic!("{desc:?}: {e}"));
    let t = d
        .build(lstopo_topology())
        .unwrap_or_else(|e| panic!("{desc:?}: {e}"));
    t.check().unwrap_or_else(|e| panic!("{desc:?}: {e}"));
    t
}

fn exp(desc: &str) -> String {
    export(&build(desc), ExportFlags::NONE).unwrap_or_else(|e| panic!("{desc:?}: {e}"))
}

fn err(desc: &str) -> SyntheticError {
    match parse(desc) {
        Ok(d) => panic!("{desc:?} parsed as {d:?}"),
        Err(e) => e,
    }
}

fn kind(desc: &str) -> K {
    err(desc).kind()
}

fn count(t: &Topology, ty: ObjType) -> usize {
    t.objs_by_type(ty).len()
}

fn os_indexes(t: &Topology, ty: ObjType) -> Vec<Option<u32>> {
    t.objs_by_type(ty)
        .iter()
        .map(|&i| t.obj(i).os_index)
        .collect()
}

fn types(d: &Description) -> Vec<ObjType> {
    d.levels().iter().map(|l| l.obj_type).collect()
}

// ----------------------------------------------------------------- parse

#[test]
fn parse_basic_levels() {
    let d = parse("pack:2 core:2 pu:2").unwrap();
    assert_eq!(
        types(&d),
        [
            ObjType::Machine,
            ObjType::NUMANode,
            ObjType::Package,
            ObjType::Core,
            ObjType::PU
        ]
    );
    assert_eq!(d.pu_count(), 8);
    assert_eq!(d.levels()[1].origin, LevelOrigin::Implicit);
    assert_eq!(d.levels()[1].size, DEFAULT_NUMA_MEMORY);
    assert_eq!(d.levels()[2].position, Some(0));
    assert_eq!(d.levels()[3].position, Some(7));
    let widths: Vec<u64> = d.levels().iter().map(|l| l.width).collect();
    assert_eq!(widths, [1, 1, 2, 4, 8]);
    assert_eq!(d.object_count(), 16);
}

#[test]
fn parse_manual_examples() {
    // The examples of hwloc's manual and environment variable docs.
    for desc in [
        "pack:2 node:1 l2:1 core:2 pu:1",
        "2 3 4 5 6",
        "Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6",
        "package:1 group:4 [numa] [numa] core:16 pu:4",
        "pack:3 [numa] L2:2 core:4 pu:2",
        "node:2 core:3 pu:4",
        "node:2 sock:1 cache:1 core:2 pu:1",
        "L2iCache:2(size=32kB) pu:2",
        "NUMANode:3(memory=16MB) pu:2",
        "core:2 PU:2(indexes=0,2,1,3)",
        "numa:2 core:2 PU:2(indexes=numa:core)",
        "(memory=4GB) pack:2 pu:2",
    ] {
        if desc.contains("cache:1") {
            // hwloc 1.x generic "cache" is not a type any more.
            assert_eq!(kind(desc), K::UnknownType, "{desc}");
            continue;
        }
        parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
    }
    let a = parse("2 3 4 5 6").unwrap();
    let b = parse("Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6").unwrap();
    assert_eq!(types(&a), types(&b));
    assert_eq!(
        exp("2 3 4 5 6"),
        exp("Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6")
    );
}

#[test]
fn parse_type_names() {
    let cases: &[(&str, ObjType, Option<CacheKind>)] = &[
        ("pack", ObjType::Package, None),
        ("Package", ObjType::Package, None),
        ("socket", ObjType::Package, None),
        ("SO", ObjType::Package, None),
        ("die", ObjType::Die, None),
        ("core", ObjType::Core, None),
        ("co", ObjType::Core, None),
        ("group", ObjType::Group, None),
        ("gr", ObjType::Group, None),
        ("Tile", ObjType::Group, None),
        ("Module", ObjType::Group, None),
        ("numa", ObjType::NUMANode, None),
        ("node", ObjType::NUMANode, None),
        ("NUMANode", ObjType::NUMANode, None),
        ("l1", ObjType::L1Cache, Some(CacheKind::Unified)),
        ("l1d", ObjType::L1Cache, Some(CacheKind::Data)),
        ("L1dCache", ObjType::L1Cache, Some(CacheKind::Data)),
        ("l1i", ObjType::L1ICache, Some(CacheKind::Instruction)),
        ("L1iCache", ObjType::L1ICache, Some(CacheKind::Instruction)),
        ("l2u", ObjType::L2Cache, Some(CacheKind::Unified)),
        ("l2cache", ObjType::L2Cache, Some(CacheKind::Unified)),
        ("l2ca", ObjType::L2Cache, Some(CacheKind::Unified)),
        ("L3", ObjType::L3Cache, Some(CacheKind::Unified)),
        ("l3i", ObjType::L3ICache, Some(CacheKind::Instruction)),
        ("l4", ObjType::L4Cache, Some(CacheKind::Unified)),
        ("l5", ObjType::L5Cache, Some(CacheKind::Unified)),
    ];
    for &(name, ty, ck) in cases {
        let desc = format!("{name}:2 pu:1");
        let d = parse(&desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        let l = d.levels().iter().find(|l| l.position == Some(0)).unwrap();
        assert_eq!(l.obj_type, ty, "{desc}");
        assert_eq!(l.cache_kind, ck, "{desc}");
    }
    for bad in [
        "p", "c", "l0", "l6", "l4i", "l2x", "cache", "foo", "tile", "packages", "me", "l2cachex",
    ] {
        let desc = format!("{bad}:2 pu:1");
        assert_eq!(kind(&desc), K::UnknownType, "{desc}");
    }
    for bad in [
        "machine", "ma", "misc", "os", "osdev", "pcidev", "bridge", "memcache", "gpu", "net",
        "block",
    ] {
        let desc = format!("{bad}:2 pu:1");
        assert_eq!(kind(&desc), K::DisallowedType, "{desc}");
    }
}

#[test]
fn parse_numbers_and_whitespace() {
    assert_eq!(parse("pack:0x2 pu:010").unwrap().pu_count(), 16);
    assert_eq!(parse("  pack:2\n  pu:2  \n").unwrap().pu_count(), 4);
    assert_eq!(parse("pack:2core:2 pu:1").unwrap().pu_count(), 4);
    assert_eq!(
        parse("pack:4294967295 pu:1").unwrap_err().kind(),
        K::TooLarge
    );
    assert_eq!(kind("pack:4294967296 pu:1"), K::ArityTooLarge);
    assert_eq!(kind("pack:99999999999999999999999 pu:1"), K::ArityTooLarge);
    assert_eq!(kind("pack:0 pu:1"), K::ZeroArity);
    assert_eq!(kind("pack:2 pu:0"), K::ZeroArity);
    // Octal, as strtoul reads it: "0" then junk.
    assert_eq!(kind("pack:2 pu:08"), K::ZeroArity);
    assert_eq!(kind("pack:2 pu:018"), K::DuplicateLevel);
    assert_eq!(kind("pack: 2 pu:1"), K::MissingArity);
    assert_eq!(kind("pack:-2 pu:1"), K::MissingArity);
    assert_eq!(kind("pack pu:1"), K::MissingColon);
    assert_eq!(kind("pack2:2 pu:1"), K::MissingColon);
    assert_eq!(kind("pack:2 pu:2x"), K::UnknownType);
    assert_eq!(kind("pack:2\tpu:2"), K::UnknownType);
}

#[test]
fn parse_structure_errors() {
    assert_eq!(kind(""), K::MissingPuLevel);
    assert_eq!(kind("   "), K::MissingPuLevel);
    assert_eq!(kind("pack:2 core:2"), K::MissingPuLevel);
    assert_eq!(kind("(memory=1GB)"), K::MissingPuLevel);
    assert_eq!(kind("pack:2 pu:2 pu:2"), K::DuplicateLevel);
    assert_eq!(kind("pu:2 core:2 3"), K::DuplicateLevel);
    assert_eq!(kind("pack:2 pack:2 pu:1"), K::DuplicateLevel);
    assert_eq!(kind("die:2 die:2 pu:1"), K::DuplicateLevel);
    assert_eq!(kind("core:2 core:2 pu:1"), K::DuplicateLevel);
    assert_eq!(kind("numa:2 numa:2 pu:1"), K::DuplicateLevel);
    assert_eq!(kind("numa:2 [numa] pu:1"), K::NumaLevelAndAttached);
    assert_eq!(kind("pack:2 [numa] numa:2 pu:1"), K::NumaLevelAndAttached);
    assert_eq!(kind("2 core:2 pu:2"), K::MixedUnnamedLevels);
    assert_eq!(kind("pack:2 2 pu:2"), K::MixedUnnamedLevels);
    // Duplicate caches and groups are fine.
    assert!(parse("l2:2 l2:2 pu:1").is_ok());
    assert!(parse("group:2 group:2 pu:1").is_ok());
    // Position of the second duplicate.
    assert_eq!(err("pack:2 pack:2 pu:1").position(), Some(7));
}

#[test]
fn parse_brackets_and_parentheses() {
    assert_eq!(kind("pack:2 [numa pu:2"), K::UnclosedBracket);
    assert_eq!(kind("pack:2 [numa"), K::UnclosedBracket);
    assert_eq!(kind("pack:2 [numa:1] pu:2"), K::UnclosedBracket);
    assert_eq!(kind("pack:2 [numa(memory=1GB) pu:2"), K::UnclosedBracket);
    assert_eq!(
        kind("pack:2 [numa(memory=1GB] pu:2"),
        K::UnclosedParenthesis
    );
    assert_eq!(
        kind("pack:2 [numa(memory=1GB] pu:2(indexes=0,1,2,3)"),
        K::BadSize
    );
    assert_eq!(kind("pack:2 [numa(memory=1GB"), K::UnclosedParenthesis);
    assert_eq!(kind("pack:2(memory=1 pu:2"), K::UnclosedParenthesis);
    assert_eq!(kind("(memory=1"), K::UnclosedParenthesis);
    assert_eq!(kind("pack:2 [core] pu:2"), K::DisallowedType);
    assert_eq!(kind("pack:2 [memcache] pu:2"), K::DisallowedType);
    assert_eq!(kind("pack:2 [foo] pu:2"), K::UnknownType);
    assert_eq!(kind("pack:2 [ numa] pu:2"), K::UnknownType);
    assert_eq!(kind("pack:2 ] pu:2"), K::UnknownType);
    assert_eq!(kind("pack:2 ) pu:2"), K::UnknownType);
    assert_eq!(kind("pack:2 ( pu:2"), K::UnknownType);
    let d = parse("pack:2 [numa(memory=2GB)] [numa] pu:2").unwrap();
    let p = &d.levels()[1];
    assert_eq!(p.obj_type, ObjType::Package);
    assert_eq!(p.attached.len(), 2);
    assert_eq!(p.attached[0].memory, 2_000_000_000);
    assert_eq!(p.attached[0].position, 7);
    // 1 GiB when not given, as hwloc 2.14.
    assert_eq!(p.attached[1].memory, 1 << 30);
    assert_eq!(d.attached_count(), 4);
    // No implicit NUMA level when NUMA nodes are attached.
    assert_eq!(types(&d), [ObjType::Machine, ObjType::Package, ObjType::PU]);
}

#[test]
fn parse_attributes_and_sizes() {
    let size = |desc: &str, level: usize| parse(desc).unwrap().levels()[level].size;
    assert_eq!(size("l2:2(size=1MB) pu:1", 2), 1_000_000);
    assert_eq!(size("l2:2(size=1MiB) pu:1", 2), 1 << 20);
    assert_eq!(size("l2:2(size=3kB) pu:1", 2), 3000);
    assert_eq!(size("l2:2(size=3KB) pu:1", 2), 3000);
    assert_eq!(size("l2:2(size=3kib) pu:1", 2), 3 << 10);
    assert_eq!(size("l2:2(size=2GiB) pu:1", 2), 2 << 30);
    assert_eq!(size("l2:2(size=2gb) pu:1", 2), 2_000_000_000);
    assert_eq!(size("l2:2(size=1TB) pu:1", 2), 1_000_000_000_000);
    assert_eq!(size("l2:2(size=1TiB) pu:1", 2), 1 << 40);
    assert_eq!(size("l2:2(size=0x10) pu:1", 2), 16);
    assert_eq!(size("l2:2(size=010) pu:1", 2), 8);
    assert_eq!(size("l2:2(size=100 ) pu:1", 2), 100);
    assert_eq!(size("l2:2() pu:1", 2), 4 << 20);
    // Defaults: 32 KiB L1, then 4 MiB L2 times 4 per level; 1 GiB NUMA.
    assert_eq!(size("l1:2 pu:1", 2), 32 << 10);
    assert_eq!(size("l1i:2 pu:1", 2), 32 << 10);
    assert_eq!(size("l3:2 pu:1", 2), 16 << 20);
    assert_eq!(size("l4:2 pu:1", 2), 64 << 20);
    assert_eq!(size("l5:2 pu:1", 2), 256 << 20);
    assert_eq!(size("numa:2 pu:1", 1), 1 << 30);
    assert_eq!(size("numa:2(memory=0) pu:1", 1), 1 << 30);
    assert_eq!(size("numa:2(memory=5GB) pu:1", 1), 5_000_000_000);
    let d = parse("numa:2(memorysidecachesize=1GiB memory=2GiB) pu:1").unwrap();
    assert_eq!(d.levels()[1].memory_side_cache_size, 1 << 30);
    assert_eq!(d.levels()[1].size, 2 << 30);

    for bad in [
        "l2:2(size=) pu:1",
        "l2:2(size=abc) pu:1",
        "l2:2(size=5xyz) pu:1",
        "l2:2(size=-5) pu:1",
        "l2:2(size=1K) pu:1",
        "l2:2(size=99999999999999999999) pu:1",
        "l2:2(size=20000000TB) pu:1",
        "[numa(memory=1.5GB)] pu:1",
    ] {
        assert_eq!(kind(bad), K::BadSize, "{bad}");
    }
    assert_eq!(err("l2:2(size=abc) pu:1").position(), Some(10));
    assert!(err("l2:2(size=abc) pu:1").message().contains("`abc`"));
    assert_eq!(kind("l2:2(memory=1) pu:1"), K::UnknownAttribute);
    assert_eq!(kind("numa:2(size=1) pu:1"), K::UnknownAttribute);
    assert_eq!(kind("numa:2(foo=1) pu:1"), K::UnknownAttribute);
    assert_eq!(kind("numa:2( memory=1) pu:1"), K::UnknownAttribute);
    assert_eq!(
        kind("numa:2(memory=1  indexes=0,1) pu:1"),
        K::UnknownAttribute
    );
    assert_eq!(kind("numa:2(memory=1,indexes=0,1) pu:1"), K::BadSize);
    assert_eq!(kind("numa:2(indexes=0,1x) pu:1"), K::BadIndexes);
}

#[test]
fn parse_guessed_types() {
    let t = |desc: &str| types(&parse(desc).unwrap());
    use ObjType::*;
    assert_eq!(t("2"), [Machine, NUMANode, PU]);
    assert_eq!(t("2 2"), [Machine, NUMANode, PU]);
    assert_eq!(t("2 2 2"), [Machine, Package, NUMANode, PU]);
    assert_eq!(t("2 2 2 2"), [Machine, Package, NUMANode, Core, PU]);
    assert_eq!(
        t("2 2 2 2 2"),
        [Machine, Package, NUMANode, L2Cache, Core, PU]
    );
    assert_eq!(
        t("2 2 2 2 2 2"),
        [Machine, Package, NUMANode, L2Cache, L1Cache, Core, PU]
    );
    assert_eq!(
        t("2 2 2 2 2 2 2 2 2"),
        [
            Machine, Group, Package, NUMANode, L3Cache, L2Cache, L1Cache, L1ICache, Core, PU
        ]
    );
    // Attached NUMA nodes: no NUMA level is guessed.
    assert_eq!(t("2 [numa] 2 2"), [Machine, Package, Core, PU]);
    let d = parse("2 2 2 2 2 2").unwrap();
    assert_eq!(d.levels()[4].cache_kind, Some(CacheKind::Data));
    assert_eq!(d.levels()[2].origin, LevelOrigin::Guessed);
    // Group depths: numbered from the top down.
    let d = parse("group:2 group:2 group4:2 pu:2").unwrap();
    let g: Vec<Option<u32>> = d.levels().iter().map(|l| l.group_depth).collect();
    assert_eq!(g, [None, None, Some(3), Some(2), Some(4), None]);
}

#[test]
fn parse_indexes() {
    let idx = |desc: &str| {
        let d = parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        d.levels().last().unwrap().indexes.clone().unwrap()
    };
    assert_eq!(idx("core:2 pu:2(indexes=0,2,1,3)"), [0, 2, 1, 3]);
    assert_eq!(
        idx("pack:2 core:2 pu:2(indexes=2*4:1*2)"),
        [0, 4, 1, 5, 2, 6, 3, 7]
    );
    assert_eq!(
        idx("pack:2 core:2 pu:2(indexes=core:pack)"),
        [0, 4, 1, 5, 2, 6, 3, 7]
    );
    assert_eq!(
        idx("pack:2 core:2 pu:2(indexes=core)"),
        [0, 4, 1, 5, 2, 6, 3, 7]
    );
    assert_eq!(
        idx("pack:2 core:2 pu:2(indexes=pack)"),
        [0, 2, 4, 6, 1, 3, 5, 7]
    );
    assert_eq!(
        idx("pack:2 core:2 pu:2(indexes=pack:core)"),
        [0, 4, 2, 6, 1, 5, 3, 7]
    );
    assert_eq!(
        idx("numa:2 core:2 pu:2(indexes=numa:core)"),
        [0, 4, 2, 6, 1, 5, 3, 7]
    );
    assert_eq!(idx("pack:2 pu:4(indexes=0x1*8)"), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(idx("pack:2 pu:2(indexes=4,5,6,7)"), [4, 5, 6, 7]);
    let d = parse("pack:2 numa:2(indexes=3,2,1,0) pu:1").unwrap();
    assert_eq!(d.levels()[2].indexes.as_deref(), Some(&[3, 2, 1, 0][..]));
    let d = parse("pack:2 [numa(indexes=1,0)] pu:1").unwrap();
    assert_eq!(d.attached_indexes(), Some(&[1, 0][..]));

    for bad in [
        "pu:4(indexes=0,1,2)",
        "pu:4(indexes=0,1,2,3,4)",
        "pu:4(indexes=0,1,1,2)",
        "pu:4(indexes=0,,1,2)",
        "pu:4(indexes=0,1,2,)",
        "pu:4(indexes=)",
        "pu:4(indexes=0,1,2,99999999999)",
        "pu:4(indexes=0,1,2,16777216)",
        "pack:2 core:2 pu:2(indexes=2*2:1*2)",
        "pack:2 core:2 pu:2(indexes=0*2)",
        "pack:2 core:2 pu:2(indexes=2*0)",
        "pack:2 core:2 pu:2(indexes=2*)",
        "pack:2 core:2 pu:2(indexes=2x2)",
        "pack:2 core:2 pu:2(indexes=2*4:)",
        "pack:2 core:2 pu:2(indexes=2*4;1*2)",
        "pack:2 core:2 pu:2(indexes=1*3:2*2)",
        "pack:2 core:2 pu:2(indexes=pack:pu)",
        "pack:2 core:2 pu:2(indexes=core:core)",
        "pack:2 core:2 pu:2(indexes=die)",
        "pack:2 core:2 pu:2(indexes=foo)",
        "pack:2(indexes=core) core:2 pu:2",
        "pack:2 [numa(indexes=0,1,2)] pu:1",
        "[numa(indexes=0,0)] pack:2 [numa] pu:1",
    ] {
        assert_eq!(kind(bad), K::BadIndexes, "{bad}");
    }
    assert_eq!(kind("pu:4(indexes=osdev)"), K::DisallowedType);
    // 1*3:2*2 over 6 objects makes [0,1,5,3,1,2]: hwloc misses the duplicate.
    assert!(
        err("pack:2 core:3 pu:1(indexes=1*3:2*2)")
            .message()
            .contains("twice")
    );
    assert_eq!(err("pu:4(indexes=0,1,1,2)").position(), Some(13));
}

#[test]
fn parse_limits() {
    assert!(parse("pack:1024 core:1024 pu:1").is_ok());
    let e = err("pack:1024 core:1024 pu:2");
    assert_eq!(e.kind(), K::TooLarge);
    assert!(e.message().contains("1048576"), "{e}");
    assert_eq!(e.position(), Some(20));
    let many = "group:1 ".repeat(MAX_LEVELS - 1) + "pu:1";
    assert!(parse(&many).is_ok());
    let too_many = "group:1 ".repeat(MAX_LEVELS) + "pu:1";
    assert_eq!(kind(&too_many), K::TooManyLevels);
    let objects = "pack:1024 core:1024 l2:1 l1:1 pu:1";
    assert_eq!(kind(objects), K::TooLarge);
    // Parsing is fine but building needs too much memory or time.
    let d = parse("pu:1048576").unwrap();
    assert_eq!(
        d.build(lstopo_topology()).err().map(|e| e.kind()),
        Some(K::TooLarge)
    );
    let d = parse("pack:4 core:65536 pu:4").unwrap();
    assert_eq!(
        d.build(lstopo_topology()).err().map(|e| e.kind()),
        Some(K::TooLarge)
    );
    let d = parse("pu:8192").unwrap();
    let e = d.build(lstopo_topology()).err().unwrap();
    assert_eq!(e.kind(), K::TooLarge);
    assert!(e.message().contains("limit"), "{e}");
    assert_eq!(e.position(), None);
    let idx: Vec<String> = (0..128u32).map(|i| (i * 131_000).to_string()).collect();
    let d = parse(&format!("pack:128 pu:1(indexes={})", idx.join(","))).unwrap();
    assert_eq!(
        d.build(lstopo_topology()).err().map(|e| e.kind()),
        Some(K::TooLarge)
    );
    // Large but realistic machines build.
    let t = build("pack:4 [numa] l3:2 core:16 pu:4");
    assert_eq!(count(&t, ObjType::PU), 512);
    let t = build("pu:4096");
    assert_eq!(count(&t, ObjType::PU), 4096);
}

#[test]
fn error_display() {
    let e = err("pack:2 foo:2 pu:2");
    assert_eq!(e.kind(), K::UnknownType);
    assert_eq!(e.position(), Some(7));
    assert_eq!(
        e.to_string(),
        "invalid synthetic description at byte 7: unknown object type `foo:2`"
    );
    let e = err("pack:2 ");
    assert!(e.to_string().contains("PUs"), "{e}");
    let long = "x".repeat(100);
    assert!(err(&long).message().len() < 60);
    // Non-ASCII input does not panic.
    assert_eq!(kind("pack:2 é:2 pu:1"), K::UnknownType);
    assert_eq!(kind("pack:2(memory=é) pu:1"), K::BadSize);
    assert_eq!(kind("pack:2 [numaé] pu:1"), K::UnclosedBracket);
}

// ----------------------------------------------------------------- build

#[test]
fn build_counts_and_indexes() {
    let t = build("pack:2 core:2 pu:2");
    assert_eq!(count(&t, ObjType::Package), 2);
    assert_eq!(count(&t, ObjType::Core), 4);
    assert_eq!(count(&t, ObjType::PU), 8);
    assert_eq!(count(&t, ObjType::NUMANode), 1);
    assert_eq!(
        os_indexes(&t, ObjType::Core),
        [Some(0), Some(1), Some(2), Some(3)]
    );
    assert_eq!(t.cpuset().to_string(), "0x000000ff");
    let root = t.obj(t.root());
    assert_eq!(root.obj_type, ObjType::Machine);
    let infos: Vec<(&str, &str)> = t
        .infos
        .iter()
        .map(|i| (i.name.as_str(), i.value.as_str()))
        .collect();
    assert_eq!(
        infos,
        [
            ("Backend", "Synthetic"),
            ("SyntheticDescription", "pack:2 core:2 pu:2")
        ]
    );
    assert!(t.support.iter().any(|s| s == "discovery.numa_memory"));
    assert!(!t.is_thissystem);
    let n = t.obj(t.objs_by_type(ObjType::NUMANode)[0]);
    assert_eq!(n.numa().unwrap().local_memory, 1 << 30);
    assert_eq!(n.numa().unwrap().page_types[0].size, 4096);
    assert_eq!(n.numa().unwrap().page_types[0].count, 1 << 18);
    assert_eq!(n.parent(), Some(t.root()));
}

#[test]
fn build_caches_groups_and_memory() {
    let t = build(
        "pack:2 [numa(memory=2GiB)] l3:1(size=32MB) l2:2 l1d:1(size=48KiB) l1i:1 core:1 pu:2",
    );
    let l3 = t.obj(t.objs_by_type(ObjType::L3Cache)[0]);
    let c = l3.cache().unwrap();
    assert_eq!(
        (c.size, c.depth, c.linesize, c.kind),
        (32_000_000, 3, 64, CacheKind::Unified)
    );
    assert_eq!(l3.os_index, None);
    let l1 = t.obj(t.objs_by_type(ObjType::L1Cache)[0]);
    assert_eq!(l1.cache().unwrap().kind, CacheKind::Data);
    assert_eq!(l1.cache().unwrap().size, 48 << 10);
    let l1i = t.obj(t.objs_by_type(ObjType::L1ICache)[0]);
    assert_eq!(l1i.cache().unwrap().kind, CacheKind::Instruction);
    assert_eq!(count(&t, ObjType::L2Cache), 4);
    assert_eq!(count(&t, ObjType::PU), 8);
    let nodes = t.objs_by_type(ObjType::NUMANode);
    assert_eq!(nodes.len(), 2);
    for (i, &n) in nodes.iter().enumerate() {
        let o = t.obj(n);
        assert_eq!(o.numa().unwrap().local_memory, 2 << 30);
        assert_eq!(o.os_index, Some(i as u32));
        assert_eq!(t.obj(o.parent().unwrap()).obj_type, ObjType::Package);
    }
    assert_eq!(t.obj(t.root()).total_memory, 4 << 30);

    let t = build("group:2 numa:1 core:2 pu:1");
    let g = t.obj(t.objs_by_type(ObjType::Group)[0]);
    let ga = g.group().unwrap();
    assert_eq!((ga.kind, ga.subkind), (group_kind::SYNTHETIC, 0));
    assert_eq!(g.memory_children().len(), 1);
    let t = build("numa:2 core:2 pu:1");
    let g = t.obj(t.objs_by_type(ObjType::Group)[0]);
    assert_eq!(g.group().unwrap().kind, group_kind::MEMORY);
}

#[test]
fn build_os_indexes() {
    let t = build("pack:2 core:2 pu:2(indexes=pack)");
    assert_eq!(
        os_indexes(&t, ObjType::PU),
        [0, 2, 4, 6, 1, 3, 5, 7].map(Some)
    );
    let core0 = t.obj(t.objs_by_type(ObjType::Core)[0]);
    assert_eq!(core0.cpuset.as_ref().unwrap().to_string(), "0x00000005");
    let t = build("pack:2 [numa(indexes=1,0)] pu:1");
    assert_eq!(os_indexes(&t, ObjType::NUMANode), [Some(1), Some(0)]);
    let t = build("pack:2(indexes=1,0) l2:2(indexes=3,2,1,0) pu:1");
    assert_eq!(os_indexes(&t, ObjType::Package), [Some(1), Some(0)]);
    assert_eq!(os_indexes(&t, ObjType::L2Cache), [3, 2, 1, 0].map(Some));
    let t = build("[numa] pack:2 [numa] pu:1");
    // Creation order: each package's node, then the root's.
    assert_eq!(
        os_indexes(&t, ObjType::NUMANode),
        [Some(0), Some(1), Some(2)]
    );
    let root = t.obj(t.root());
    assert_eq!(t.obj(root.memory_children()[0]).os_index, Some(2));
}

#[test]
fn build_memory_side_caches() {
    let t = build("pack:2 [numa(memory=1GB memorysidecachesize=256MiB)] pu:2");
    let mc = t.objs_by_type(ObjType::MemCache);
    assert_eq!(mc.len(), 2);
    let m = t.obj(mc[0]);
    assert_eq!(m.cache().unwrap().size, 256 << 20);
    assert_eq!(t.obj(m.memory_children()[0]).obj_type, ObjType::NUMANode);
    assert_eq!(
        exp("pack:2 [numa(memory=1GB memorysidecachesize=256MiB)] pu:2"),
        "Package:2 [NUMANode(memory=1000000000 memorysidecachesize=268435456)] PU:2"
    );
    // Memory-side caches are dropped by the default filters.
    let d = parse("numa:2(memorysidecachesize=1GB) pu:1").unwrap();
    let t = d.build(Topology::new()).unwrap();
    assert_eq!(count(&t, ObjType::MemCache), 0);
}

#[test]
fn build_respects_filters() {
    let d = parse("pack:2 l2:1 l1i:1 core:1 pu:2").unwrap();
    let t = d.build(Topology::new()).unwrap();
    assert_eq!(count(&t, ObjType::L1ICache), 0);
    assert_eq!(count(&t, ObjType::L2Cache), 2);
    let mut f = Topology::new();
    f.set_cache_types_filter(TypeFilter::KeepNone);
    let t = d.build(f).unwrap();
    assert_eq!(count(&t, ObjType::L2Cache), 0);
    assert_eq!(
        export(&t, ExportFlags::NONE).unwrap(),
        "[NUMANode(memory=1073741824)] Package:2 Core:1 PU:2"
    );
}

// ----------------------------------------------------------------- export

#[test]
fn export_matches_hwloc_outputs() {
    // Outputs of hwloc 2.9's `lstopo-no-graphics -i DESC --of synthetic`.
    for (desc, want) in [
        (
            "pack:2 core:2 pu:2",
            "[NUMANode(memory=1073741824)] Package:2 Core:2 PU:2",
        ),
        (
            "2 3 4 5 6",
            "Package:2 Group:3 [NUMANode(memory=1073741824)] L2Cache:4(size=4194304) Core:5 PU:6",
        ),
        ("2 2", "Group:2 [NUMANode(memory=1073741824)] PU:2"),
        (
            "numa:2 core:2 pu:1",
            "Group:2 [NUMANode(memory=1073741824)] Core:2 PU:1",
        ),
        (
            "pack:2 [numa] [numa] pu:2",
            "Package:2 [NUMANode(memory=1073741824)] [NUMANode(memory=1073741824)] PU:2",
        ),
        (
            "[numa] pack:2 pu:2",
            "[NUMANode(memory=1073741824)] Package:2 PU:2",
        ),
        (
            "pack:2 [numa] pu:2 [numa]",
            "Package:2 [NUMANode(memory=1073741824)] Group:2 [NUMANode(memory=1073741824)] PU:1",
        ),
        (
            "pack:2 pu:2(indexes=0,2,1,3)",
            "[NUMANode(memory=1073741824)] Package:2 PU:2(indexes=2*2:1*2)",
        ),
        (
            "pack:2 core:2 pu:2(indexes=core:pack)",
            "[NUMANode(memory=1073741824)] Package:2 Core:2 PU:2(indexes=2*4:1*2)",
        ),
        (
            "l2:2 l2:2 pu:1",
            "[NUMANode(memory=1073741824)] L2Cache:2(size=4194304) L2Cache:2(size=4194304) PU:1",
        ),
        (
            "group:2 group:2 pu:1",
            "[NUMANode(memory=1073741824)] Group:2 PU:2",
        ),
        (
            "l3d:2 pu:2",
            "[NUMANode(memory=1073741824)] L3dCache:2(size=16777216) PU:2",
        ),
        (
            "core:2 pack:2 pu:1",
            "[NUMANode(memory=1073741824)] Core:2 Package:2 PU:1",
        ),
        (
            "Tile:2 core:2 pu:1",
            "[NUMANode(memory=1073741824)] Group:2 Core:2 PU:1",
        ),
        (
            "pack:2 [numa(memory=1GB)] [numa(memory=2GB)] pu:2",
            "Package:2 [NUMANode(memory=1000000000)] [NUMANode(memory=2000000000)] PU:2",
        ),
        (
            "[NUMANode(indexes=2,0,1)] Package:2 [NUMANode(memory=1073741824)] PU:1",
            "[NUMANode(memory=1073741824)] Package:2 [NUMANode(memory=1073741824 indexes=2,0,1)] PU:1",
        ),
    ] {
        assert_eq!(exp(desc), want, "{desc}");
    }
}

#[test]
fn export_flags() {
    let t = build("pack:2 [numa(memory=1GB)] die:1 l2:2 l1d:1 core:1 pu:2(indexes=pack:die:core)");
    let e = |f: ExportFlags| export(&t, f).unwrap();
    assert_eq!(
        e(ExportFlags::NONE),
        "Package:2 [NUMANode(memory=1000000000)] L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
    );
    assert_eq!(
        e(ExportFlags::NO_EXTENDED_TYPES),
        "Socket:2 [NUMANode(memory=1000000000)] Cache:2(size=4194304) Cache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
    );
    assert_eq!(
        e(ExportFlags::NO_ATTRS),
        "Package:2 [NUMANode] L2Cache:2 L1dCache:1 Core:1 PU:2"
    );
    assert_eq!(
        e(ExportFlags::V1),
        "Socket:2 NUMANode:1(memory=1000000000) L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
    );
    assert_eq!(
        e(ExportFlags::IGNORE_MEMORY),
        "Package:2 L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
    );
    assert_eq!(ExportFlags::from_bits(16), None);
    assert_eq!(ExportFlags::from_bits(15).unwrap().bits(), 15);
    assert!((ExportFlags::V1 | ExportFlags::NO_ATTRS).contains(ExportFlags::V1));
    let t = build("pack:2 [numa] [numa] pu:2");
    assert_eq!(
        export(&t, ExportFlags::V1).unwrap_err().kind(),
        K::V1Incompatible
    );
    let t = build("[numa] pack:2 [numa] pu:1");
    assert_eq!(
        export(&t, ExportFlags::V1).unwrap_err().kind(),
        K::V1Incompatible
    );
}

#[test]
fn export_errors() {
    // Not symmetric: packages with 2 and 3 PUs.
    let mut t = Topology::new();
    for (i, set) in ["0x3", "0x1c"].iter().enumerate() {
        let set: CpuSet = set.parse().unwrap();
        for pu in set.iter() {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        t.insert_by_cpuset(Object::with_cpuset(ObjType::Package, Some(i as u32), set))
            .unwrap();
    }
    t.finish().unwrap();
    let e = export(&t, ExportFlags::NONE).unwrap_err();
    assert_eq!(e.kind(), K::NonSymmetric);
    assert_eq!(e.position(), None);
    assert!(e.to_string().contains("symmetric"));
    // Memory attached asymmetrically: a node on one package only.
    let mut t = lstopo_topology();
    let d = parse("pack:2 [numa] pu:2").unwrap();
    t = d.build(t).unwrap();
    let pack0 = t.objs_by_type(ObjType::Package)[0];
    let mut n = Object::with_cpuset(
        ObjType::NUMANode,
        Some(9),
        t.obj(pack0).cpuset.clone().unwrap(),
    );
    n.nodeset = Some(NodeSet::from_index(9));
    t.insert_by_cpuset(n).unwrap();
    // Node 9 was not in the topology when it was first finished.
    t.allowed_nodeset = NodeSet::full();
    assert_eq!(
        export(&t, ExportFlags::NONE).unwrap_err().kind(),
        K::NotFinished
    );
    t.finish().unwrap();
    assert_eq!(
        export(&t, ExportFlags::NONE).unwrap_err().kind(),
        K::MemoryNotSymmetric
    );
    assert_eq!(
        export(&t, ExportFlags::IGNORE_MEMORY).unwrap(),
        "Package:2 PU:2"
    );
}

fn round_trip(desc: &str) -> String {
    let first = exp(desc);
    let second = exp(&first);
    assert_eq!(first, second, "{desc:?} -> {first:?} -> {second:?}");
    let (a, b) = (build(desc), build(&first));
    for ty in ObjType::ALL {
        assert_eq!(count(&a, ty), count(&b, ty), "{desc:?}: {ty}");
        if matches!(ty, ObjType::PU | ObjType::NUMANode) {
            assert_eq!(os_indexes(&a, ty), os_indexes(&b, ty), "{desc:?}: {ty}");
        }
    }
    first
}

#[test]
fn export_round_trips() {
    for desc in [
        "pack:2 core:2 pu:2",
        "pack:2 node:1 l2:1 core:2 pu:1",
        "2 3 4 5 6",
        "2 2 2 2 2 2 2 2 2 2",
        "package:1 group:4 [numa] [numa] core:16 pu:4",
        "pack:3 [numa] L2:2 core:4 pu:2",
        "[numa] pack:2 [numa] pu:1",
        "[NUMANode(indexes=2,0,1)] Package:2 [NUMANode] PU:1",
        "pack:2 [numa(indexes=1,0)] pu:2",
        "pack:4 numa:2(indexes=7,6,5,4,3,2,1,0) core:2 pu:1",
        "pack:2 core:3 pu:2(indexes=0,6,1,7,2,8,3,9,4,10,5,11)",
        "pack:2 core:2 pu:2(indexes=1,0,3,2,5,4,7,6)",
        "pack:2 pu:2(indexes=4,5,6,7)",
        "numa:2(memorysidecachesize=64MB) core:2 pu:2",
        "pack:2 [numa(memorysidecachesize=1GB)] [numa] pu:2",
        "group3:2 group1:2 pu:2",
        "l2:2 l2:2 pu:1",
        "pack:2 pu:2 [numa]",
    ] {
        round_trip(desc);
    }
}

// ----------------------------------------------------------------- properties

/// Level kinds a random description picks from, in a valid order.
const ORDER: &[&str] = &[
    "group", "pack", "die", "numa", "l3", "l2", "l1d", "l1i", "core",
];

fn arb_description() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec((any::<bool>(), 1u32..4, 0u8..6), ORDER.len()),
        1u32..4,
        0usize..ORDER.len() + 2,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(picks, pus, attach_at, pu_perm, seed)| {
            let mut parts: Vec<String> = Vec::new();
            let numa_level = picks[3].0;
            let mut widths = 1u64;
            let mut attach = (attach_at, false);
            if !numa_level && attach.0 == 0 {
                parts.push("[numa(memory=2GB)]".to_string());
                attach.1 = true;
            }
            for (i, (name, &(take, arity, attr))) in ORDER.iter().zip(&picks).enumerate() {
                if !take {
                    continue;
                }
                widths *= u64::from(arity);
                let mut level = format!("{name}:{arity}");
                match (*name, attr) {
                    ("numa", 1..=3) => level.push_str(&format!("(memory={attr}GiB)")),
                    ("l3" | "l2" | "l1d" | "l1i", 1..=3) => {
                        level.push_str(&format!("(size={}KiB)", u32::from(attr) * 256))
                    }
                    _ => {}
                }
                parts.push(level);
                if !numa_level && !attach.1 && attach.0 == i + 1 {
                    parts.push("[numa]".to_string());
                    attach.1 = true;
                }
            }
            let total = widths * u64::from(pus);
            if pu_perm && total > 1 {
                // A rotation of the PU indexes.
                let shift = seed % total;
                let idx: Vec<String> = (0..total)
                    .map(|i| ((i + shift) % total).to_string())
                    .collect();
                parts.push(format!("pu:{pus}(indexes={})", idx.join(",")));
            } else {
                parts.push(format!("pu:{pus}"));
            }
            parts.join(" ")
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_descriptions_round_trip(desc in arb_description()) {
        let d = parse(&desc).unwrap();
        let t = build(&desc);
        prop_assert_eq!(count(&t, ObjType::PU) as u64, d.pu_count());
        let mut pus = os_indexes(&t, ObjType::PU);
        pus.sort();
        prop_assert_eq!(pus, (0..d.pu_count() as u32).map(Some).collect::<Vec<_>>());
        round_trip(&desc);
    }

    #[test]
    fn prop_parse_never_panics(s in "[ -~\n]{0,40}") {
        if let Ok(d) = parse(&s)
            && d.object_count() < 2000 {
                let _ = d.build(lstopo_topology()).map(|t| export(&t, ExportFlags::NONE));
            }
    }

    #[test]
    fn prop_parse_grammar_soup(parts in proptest::collection::vec(
        prop_oneof![
            Just("pack:"), Just("core:"), Just("pu:"), Just("l2:"), Just("numa:"),
            Just("group:"), Just("[numa"), Just("]"), Just("("), Just(")"), Just(" "),
            Just("2"), Just("0"), Just("3"), Just("size=1MB"), Just("memory=1GB"),
            Just("indexes="), Just("0,1"), Just("pack:core"), Just("2*2:1*2"), Just(","),
            Just(":"), Just("*"), Just("0x"), Just("memorysidecachesize=1kB"),
        ],
        0..16,
    )) {
        let s: String = parts.concat();
        if let Ok(d) = parse(&s) {
            prop_assert!(d.pu_count() >= 1);
            let t = d.build(lstopo_topology()).unwrap();
            let e = export(&t, ExportFlags::NONE).unwrap();
            let again = export(&build(&e), ExportFlags::NONE).unwrap();
            prop_assert_eq!(e, again);
        } else if let Err(e) = parse(&s) {
            prop_assert!(e.position().is_some_and(|p| p <= s.len()));
        }
    }
}

// ----------------------------------------------------------------- differential

/// Descriptions compared against hwloc's lstopo.
const DIFFERENTIAL: &[&str] = &[
    "pack:2 core:2 pu:2",
    "pack:2 node:1 l2:1 core:2 pu:1",
    "2 3 4 5 6",
    "Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6",
    "package:1 group:4 [numa] [numa] core:16 pu:4",
    "pack:3 [numa] L2:2 core:4 pu:2",
    "node:2 core:3 pu:4",
    "L2iCache:2(size=32kB) pu:2",
    "NUMANode:3(memory=16MB) pu:2",
    "core:2 PU:2(indexes=0,2,1,3)",
    "numa:2 core:2 PU:2(indexes=numa:core)",
    "(memory=4GB) pack:2 pu:2",
    "2",
    "2 2",
    "2 2 2 2 2 2 2 2",
    "2 2 2 2 2 2 2 2 2 2",
    "pack:2 [numa(memory=2GiB)] die:2 l3:1(size=32MB) l2:4(size=1MiB) l1d:1(size=48kB) l1i:1 core:1 pu:2",
    "group:2 numa:1 core:2 pu:1",
    "numa:2 core:2 pu:1",
    "pack:2 [numa] [numa] pu:2",
    "[numa] pack:2 [numa] pu:1",
    "pack:2 pu:2 [numa]",
    "pack:2 [numa] pu:2 [numa]",
    "core:2 pack:2 pu:1",
    "l2:2 l2:2 pu:1",
    "group:2 group:2 pu:1",
    "Tile:2 core:2 pu:1",
    "pack:2 core:2 pu:2(indexes=2*4:1*2)",
    "pack:2 core:2 pu:2(indexes=core)",
    "pack:4 numa:2(indexes=7,6,5,4,3,2,1,0) core:2 pu:1",
    "pack:2 [numa(indexes=1,0)] pu:2",
    "pack:2 [numa(memory=1GB)] [numa(memory=2GB indexes=3,2,1,0)] pu:2",
    "socket:2 l3:1 l2:2 l1:1 co:1 pu:2",
    "numa:4(memory=0x100000000) pu:2",
    "group3:2 group1:2 pu:2",
    "pack:2 die:2 [numa] core:4 pu:2",
    "l1:4 pu:1(indexes=3,2,1,0)",
    "pack:2 pu:4(indexes=0,1,2,3,4,5,6,7)",
    "pack:2\ncore:2 pu:1  ",
    "pack:8 l3:2 core:8 pu:2",
    "numa:2 pack:2 core:2 pu:1",
    "pack:2 numa:2 pu:1",
    "numa:2 l3:1 core:2 pu:1",
    "l3:2 numa:1 core:2 pu:2",
    "pack:2 core:2 pu:2(indexes=pack)",
    "[NUMANode(indexes=2,0,1)] Package:2 [NUMANode] PU:1",
    "pack:2 pu:2(indexes=4,5,6,7)",
    "pack:2 group:3 [numa] pu:2",
    "die:2 pack:2 pu:2",
    "l1i:2 l1d:2 pu:1",
    "module:2 pu:2",
    "Module:2 pu:2",
    "pack:2 core:2 pu:2(indexes=2*2:1*2)",
    "pu:4(indexes=0,1,1,2)",
    "memcache:2 pu:2",
    "l2:2(size=) pu:1",
];

fn lstopo(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("lstopo-no-graphics")
        .args(args)
        .env_remove("HWLOC_SYNTHETIC")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// Per object in XML order: type, os index, cpuset, nodeset, cache size,
/// NUMA memory, group kind and subkind.
fn xml_objects(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in xml.lines() {
        let line = line.trim_start();
        if !line.starts_with("<object ") {
            continue;
        }
        let attr = |name: &str| {
            let key = format!(" {name}=\"");
            line.find(&key).map(|i| {
                let rest = &line[i + key.len()..];
                rest[..rest.find('"').unwrap_or(rest.len())].to_string()
            })
        };
        out.push(format!(
            "{} os={:?} cpuset={:?} nodeset={:?} size={:?} memory={:?} kind={:?} subkind={:?} gp={:?}",
            attr("type").unwrap_or_default(),
            attr("os_index"),
            attr("cpuset"),
            attr("nodeset"),
            attr("cache_size"),
            attr("local_memory"),
            attr("kind"),
            attr("subkind"),
            attr("gp_index"),
        ));
    }
    out
}

fn our_objects(t: &Topology) -> Vec<String> {
    t.iter_dfs()
        .into_iter()
        .map(|id| {
            let o = t.obj(id);
            format!(
                "{} os={:?} cpuset={:?} nodeset={:?} size={:?} memory={:?} kind={:?} subkind={:?} gp={:?}",
                o.obj_type.xml_name(),
                o.os_index.map(|v| v.to_string()),
                o.cpuset.as_ref().map(|c| c.to_string()),
                o.nodeset.as_ref().map(|c| c.to_string()),
                o.cache().map(|c| c.size.to_string()),
                o.numa().map(|n| n.local_memory.to_string()).filter(|m| m != "0"),
                o.group().map(|g| g.kind.to_string()),
                o.group().map(|g| g.subkind.to_string()),
                Some(o.gp_index.to_string()),
            )
        })
        .collect()
}

/// Compares exports and objects with hwloc's lstopo, when installed.
/// Run with `--nocapture` to see the report.
/// The end-to-end tests' package installer, so that this comparison runs
/// on a fresh machine rather than skipping quietly.
#[path = "../../../tests/common/packages.rs"]
mod packages;

#[test]
fn differential_against_lstopo() {
    if let Err(e) = packages::require_packages(&[("/usr/bin/lstopo-no-graphics", "hwloc")]) {
        panic!("{e}");
    }
    let mut report: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for &desc in DIFFERENTIAL {
        // hwloc 2.14 (which wloc follows) gives NUMA nodes attached without
        // a memory size 1 GiB, the 2.9 of this comparison none: those are
        // compared with 2.14 by the library's suites instead.
        let attached_without_memory = desc
            .split('[')
            .skip(1)
            .any(|a| !a.split(']').next().unwrap_or("").contains("memory="));
        if attached_without_memory {
            *report
                .entry("attached NUMA nodes without memory (2.14 gives 1 GiB)")
                .or_default() += 1;
            continue;
        }
        let theirs = lstopo(&["-i", desc, "--of", "synthetic"]);
        let ours = parse(desc).and_then(|d| d.build(lstopo_topology()));
        let (theirs, ours) = match (theirs, ours) {
            (None, Err(_)) => {
                *report.entry("both refuse").or_default() += 1;
                continue;
            }
            (Some(_), Err(e)) if desc.contains("indexes") => {
                // hwloc ignores bad index lists; we refuse them.
                std::eprintln!("expected difference: {desc:?}: {e}");
                *report
                    .entry("we refuse bad indexes hwloc ignores")
                    .or_default() += 1;
                continue;
            }
            (Some(_), Err(e)) if desc.contains("size=)") => {
                std::eprintln!("expected difference: {desc:?}: {e}");
                *report
                    .entry("we refuse empty sizes hwloc reads as 0")
                    .or_default() += 1;
                continue;
            }
            (None, Ok(_)) if desc.starts_with("memcache") => {
                *report.entry("hwloc aborts, we refuse").or_default() += 1;
                continue;
            }
            (t, o) => (t, o),
        };
        let (Some(theirs), Ok(t)) = (theirs, ours) else {
            failures.push(format!("{desc:?}: acceptance differs"));
            continue;
        };
        let ours_s = export(&t, ExportFlags::NONE).unwrap();
        if ours_s != theirs {
            failures.push(format!("{desc:?}: export {ours_s:?} != hwloc {theirs:?}"));
            continue;
        }
        for flags in 1..16u64 {
            let f = flags.to_string();
            let theirs = lstopo(&[
                "-i",
                desc,
                "--of",
                "synthetic",
                "--export-synthetic-flags",
                &f,
            ]);
            let ours = export(&t, ExportFlags::from_bits(flags).unwrap()).ok();
            if theirs != ours {
                failures.push(format!(
                    "{desc:?} flags {flags}: {ours:?} != hwloc {theirs:?}"
                ));
            }
        }
        let xml = lstopo(&["-i", desc, "--of", "xml"]).unwrap_or_default();
        let (mut a, mut b) = (xml_objects(&xml), our_objects(&t));
        if desc.contains("Tile") || desc.contains("Module") {
            // hwloc gives these groups an uninitialised depth.
            for v in [&mut a, &mut b] {
                for s in v.iter_mut() {
                    if let Some(i) = s.find(" subkind=") {
                        let j = s.find(" gp=").unwrap_or(s.len());
                        s.replace_range(i..j, "");
                    }
                }
            }
        }
        let strip_gp = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| s[..s.find(" gp=").unwrap_or(s.len())].to_string())
                .collect()
        };
        if strip_gp(&a) != strip_gp(&b) {
            let diff: Vec<String> = a
                .iter()
                .zip(&b)
                .filter(|(x, y)| x != y)
                .take(3)
                .map(|(x, y)| format!("\n    hwloc {x}\n    ours  {y}"))
                .collect();
            failures.push(format!(
                "{desc:?}: objects differ ({} vs {}){}",
                a.len(),
                b.len(),
                diff.concat()
            ));
            continue;
        }
        if a != b {
            *report.entry("same objects, gp_index differs").or_default() += 1;
        } else {
            *report.entry("identical").or_default() += 1;
        }
    }
    std::eprintln!(
        "differential report over {} descriptions: {report:?}",
        DIFFERENTIAL.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn numa_indexes_count_in_the_set_budget() {
    // One high NUMA index makes every object's node set 2 MiB: 131 objects
    // took 262 MiB (and 4 GiB with a few more) before node sets counted.
    for desc in [
        "numa:2(indexes=0,16777215) pu:128",
        "pack:2 [numa] core:64 pu:1",
    ] {
        let d = parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        if desc.starts_with("pack") {
            // Low indexes: still built.
            assert!(d.build(lstopo_topology()).is_ok(), "{desc}");
            continue;
        }
        let e = d.build(lstopo_topology()).unwrap_err();
        assert!(
            e.to_string().contains("NUMA node indexes up to 16777215"),
            "{e}"
        );
    }
}
