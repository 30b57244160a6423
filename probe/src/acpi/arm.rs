//! ARM machines: processors from the MADT's GICC structures, packages,
//! clusters, cores, threads and caches from the PPTT, as Linux derives
//! them (`drivers/acpi/pptt.c`, `drivers/base/arch_topology.c`,
//! `arch/arm64/kernel/smp.c`) and hwloc's Linux backend shows them.
//!
//! - **CPU numbers.**  The boot processor (found by its MPIDR) is 0; the
//!   other enabled GICC entries follow in table order.
//! - **Ids.**  A processor's leaf node is the PPTT leaf whose ACPI
//!   processor ID is its UID.  When the leaf is a thread, its core is the
//!   parent node, otherwise the leaf itself; the cluster is the core's
//!   parent; the package is the nearest node (from the leaf up) with the
//!   physical-package flag, or the root.  A node's id is its ACPI
//!   processor ID when that is valid (always for a leaf), otherwise its
//!   offset in the table.
//! - **Objects.**  Packages group processors of the same package id,
//!   clusters (hwloc `Group` objects of subtype `Cluster`) those of the
//!   same package and cluster ids, cores those of the same package,
//!   cluster and core ids.  A cluster of one processor, or as large as
//!   its package, is left out as hwloc leaves it out.
//! - **Caches.**  Each processor's caches are found by
//!   [`Pptt::caches_of`]; processors reaching a cache of the same level
//!   and type through the same node (or with the same cache ID) share
//!   it.  Sizes are rounded down to KiB (Linux's sysfs unit) and the
//!   associativity is hwloc's `size / line size / sets` (0 when the
//!   sets are unknown).  Linux also reads `CLIDR_EL1` for the levels a
//!   processor has; caches here come from the PPTT alone.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use wloc_core::object::{CacheAttr, CacheKind, GroupAttr, Info, ObjAttr, group_kind};
use wloc_core::{CpuSet, ObjType, Object, Topology, TopologyError};

use super::madt::Madt;
use super::pptt::{Pptt, PpttCacheType, PpttProcessor};
use crate::error::ProbeError;

/// An enabled ARM processor, numbered as Linux numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArmCpu {
    /// Its logical number (the OS index of its PU).
    pub os_index: u32,
    /// Its ACPI processor UID.
    pub uid: u32,
    /// Its MPIDR.
    pub mpidr: u64,
}

/// The enabled processors of the MADT's GICC structures, numbered as
/// Linux numbers them: the one whose MPIDR is `boot_mpidr` first, then
/// the others in table order.
pub fn arm_cpus(madt: &Madt, boot_mpidr: Option<u64>) -> Vec<ArmCpu> {
    let enabled = madt.giccs.iter().filter(|g| g.enabled);
    let boot = enabled
        .clone()
        .find(|g| Some(g.mpidr) == boot_mpidr.map(|m| m & super::madt::MPIDR_HWID_MASK));
    boot.into_iter()
        .chain(enabled.filter(|g| Some(g.mpidr) != boot.map(|b| b.mpidr)))
        .enumerate()
        .map(|(i, g)| ArmCpu {
            os_index: i as u32,
            uid: g.uid,
            mpidr: g.mpidr,
        })
        .collect()
}

/// The OS index of the processor with this ACPI processor UID.
pub fn os_index_of_uid(cpus: &[ArmCpu], uid: u32) -> Option<u32> {
    cpus.iter().find(|c| c.uid == uid).map(|c| c.os_index)
}

/// Linux's `topology_get_acpi_cpu_tag` value of a node.
fn tag(node: &PpttProcessor, is_leaf_level: bool) -> u32 {
    if is_leaf_level || node.id_valid() {
        node.acpi_processor_id
    } else {
        node.offset
    }
}

/// Ids of one processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ids {
    package: u32,
    cluster: Option<u32>,
    core: u32,
}

fn ids(pptt: &Pptt, leaf: &PpttProcessor) -> Ids {
    let parent = |n: &PpttProcessor| n.parent.and_then(|p| pptt.processor_at(p));
    let threaded = pptt.header.revision >= 2 && leaf.is_thread();
    // Linux asks for level 0 (the leaf: its UID) or, with threads, level 1
    // (the parent, or the leaf itself at the root: a level above 0 names
    // a node by offset unless its ID is valid).
    let core = if threaded {
        tag(parent(leaf).unwrap_or(leaf), false)
    } else {
        tag(leaf, true)
    };
    let mut cluster_node = parent(leaf);
    if threaded {
        cluster_node = cluster_node.and_then(parent);
    }
    let package_node = pptt
        .ancestors(leaf)
        .find(|n| n.is_physical_package())
        .or_else(|| pptt.ancestors(leaf).last())
        .unwrap_or(leaf);
    Ids {
        package: tag(package_node, false),
        cluster: cluster_node.map(|n| tag(n, false)),
        core,
    }
}

fn insert(topo: &mut Topology, obj: Object) -> Result<(), ProbeError> {
    match topo.insert_by_cpuset(obj) {
        Ok(_) | Err(TopologyError::Intersection { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Sets of CPUs sharing a key, in the order of their first CPU.
fn group_by<K: Ord + Clone>(items: impl Iterator<Item = (u32, K)>) -> Vec<(K, CpuSet)> {
    let mut index: BTreeMap<K, usize> = BTreeMap::new();
    let mut out: Vec<(K, CpuSet)> = Vec::new();
    for (os, key) in items {
        match index.get(&key) {
            Some(&i) => out[i].1.set(os),
            None => {
                index.insert(key.clone(), out.len());
                out.push((key, CpuSet::from_index(os)));
            }
        }
    }
    out
}

/// Builds the processors of an ARM machine into `topo` (whose type
/// filters the caller has set) and finishes it: one PU per enabled GICC
/// structure of the MADT, numbered by [`arm_cpus`], and, with a PPTT,
/// packages, clusters, cores and caches (see the module documentation).
/// The topology info `Backend=ACPI` is added.  NUMA nodes come from
/// [`AcpiNuma::apply`](super::AcpiNuma::apply) afterwards, with
/// [`os_index_of_uid`] mapping the SRAT's processor UIDs.
///
/// A MADT without enabled GICC structures is [`ProbeError::NoPu`], one
/// with [`MAX_OS_INDEX`](crate::MAX_OS_INDEX) or more is
/// [`ProbeError::BadOsIndex`]; a processor the PPTT has no leaf for is
/// [`ProbeError::NotInPptt`].
pub fn discover_arm(
    madt: &Madt,
    pptt: Option<&Pptt>,
    boot_mpidr: Option<u64>,
    mut topo: Topology,
) -> Result<Topology, ProbeError> {
    let cpus = arm_cpus(madt, boot_mpidr);
    if cpus.is_empty() {
        return Err(ProbeError::NoPu);
    }
    // As many PUs as the x86 path allows (a MADT can list millions).
    if let Some(c) = cpus.iter().find(|c| c.os_index >= crate::MAX_OS_INDEX) {
        return Err(ProbeError::BadOsIndex {
            pu: c.os_index as usize,
            os_index: c.os_index,
        });
    }
    if let Some(pptt) = pptt {
        let mut leaves = Vec::with_capacity(cpus.len());
        for c in &cpus {
            let leaf = pptt
                .leaf_for_uid(c.uid)
                .ok_or(ProbeError::NotInPptt { uid: c.uid })?;
            leaves.push((c.os_index, leaf, ids(pptt, leaf)));
        }
        let packages = group_by(leaves.iter().map(|(os, _, i)| (*os, i.package)));
        if topo.keeps_type(ObjType::Package) {
            for (id, set) in &packages {
                insert(
                    &mut topo,
                    Object::with_cpuset(ObjType::Package, Some(*id), set.clone()),
                )?;
            }
        }
        if topo.keeps_type(ObjType::Group) {
            let keyed = leaves
                .iter()
                .filter_map(|(os, _, i)| i.cluster.map(|c| (*os, (i.package, c))));
            for ((pkg, id), set) in group_by(keyed) {
                let whole_package = packages.iter().any(|(p, s)| *p == pkg && *s == set);
                if set.weight() == Some(1) || whole_package {
                    continue;
                }
                let mut g = Object::with_cpuset(ObjType::Group, Some(id), set);
                g.subtype = Some("Cluster".into());
                g.attr = ObjAttr::Group(GroupAttr {
                    kind: group_kind::LINUX_CLUSTER,
                    ..GroupAttr::default()
                });
                insert(&mut topo, g)?;
            }
        }
        if topo.keeps_type(ObjType::Core) {
            let keyed = leaves
                .iter()
                .map(|(os, _, i)| (*os, (i.package, i.cluster, i.core)));
            for ((_, _, id), set) in group_by(keyed) {
                insert(&mut topo, Object::with_cpuset(ObjType::Core, Some(id), set))?;
            }
        }
        // Caches: (level, type, identity) -> first CPU's description.
        let rank = |k: CacheKind| match k {
            CacheKind::Data => 0u8,
            CacheKind::Instruction => 1,
            _ => 2,
        };
        let mut caches = Vec::new();
        for (os, leaf, _) in &leaves {
            for c in pptt.caches_of(leaf) {
                let identity = match c.cache.cache_id {
                    Some(id) => (0u8, id),
                    None => (1u8, c.node),
                };
                let kind = match c.cache.cache_type {
                    Some(PpttCacheType::Data) => CacheKind::Data,
                    Some(PpttCacheType::Instruction) => CacheKind::Instruction,
                    _ => CacheKind::Unified,
                };
                caches.push((*os, (c.level, rank(kind), identity), (kind, c.cache)));
            }
        }
        let keyed = caches.iter().map(|(os, k, _)| (*os, *k));
        for (key, set) in group_by(keyed) {
            let Some(first) = set.first() else { continue };
            let Some((_, _, (kind, c))) =
                caches.iter().find(|(os, k, _)| *os == first && *k == key)
            else {
                continue;
            };
            let level = key.0;
            let Some(otype) = ObjType::cache_for(level, *kind) else {
                continue;
            };
            if !topo.keeps_type(otype) {
                continue;
            }
            let size = u64::from(c.size.unwrap_or(0)) >> 10 << 10;
            let linesize = u32::from(c.line_size.unwrap_or(0));
            let sets = u64::from(c.sets.unwrap_or(0));
            let associativity = if linesize == 0 || sets <= 1 {
                0
            } else {
                (size / u64::from(linesize) / sets).min(i32::MAX as u64) as i32
            };
            let mut o = Object::with_cpuset(otype, c.cache_id, set);
            o.attr = ObjAttr::Cache(CacheAttr {
                size,
                depth: level,
                linesize,
                associativity,
                kind: *kind,
                inclusive: false,
            });
            insert(&mut topo, o)?;
        }
    }
    for c in &cpus {
        insert(
            &mut topo,
            Object::with_cpuset(
                ObjType::PU,
                Some(c.os_index),
                CpuSet::from_index(c.os_index),
            ),
        )?;
    }
    topo.infos.push(Info {
        name: "Backend".into(),
        value: "ACPI".into(),
    });
    topo.finish()?;
    Ok(topo)
}
