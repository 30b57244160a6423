//! Building a topology from a [`Description`].

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::bitmap::{CpuSet, NodeSet};
use crate::object::{
    CacheAttr, CacheKind, GroupAttr, Info, NumaAttr, ObjAttr, ObjType, Object, PageType, group_kind,
};
use crate::topology::Topology;

use super::{Attached, CACHE_LINESIZE, Description, PAGE_SIZE, SyntheticError, SyntheticErrorKind};

// Building
// ---------------------------------------------------------------------------

struct Builder<'a> {
    desc: &'a Description,
    topo: Topology,
    /// Next object number of each level.
    next: Vec<u64>,
    /// Next attached NUMA node number.
    next_attached: u64,
}

fn topo_err(e: crate::topology::TopologyError) -> SyntheticError {
    SyntheticError::new(SyntheticErrorKind::Topology, None, format!("{e}"))
}

impl Builder<'_> {
    /// The OS index of the next object of a level: from `indexes=`, or the
    /// object's number in its level (none for caches and groups).
    fn next_os_index(&mut self, level: usize) -> (u64, Option<u32>) {
        let n = self.next[level];
        self.next[level] += 1;
        let l = &self.desc.levels[level];
        let os = match &l.indexes {
            Some(idx) => idx.get(n as usize).copied(),
            None if l.obj_type.is_cache() || l.obj_type == ObjType::Group => None,
            None => u32::try_from(n).ok(),
        };
        (n, os)
    }

    fn keeps(&self, ty: ObjType) -> bool {
        matches!(ty, ObjType::PU | ObjType::NUMANode | ObjType::Machine) || self.topo.keeps_type(ty)
    }

    /// Builds one object of `level` and, first, its subtree; adds its
    /// cpuset to `parent_set`.
    fn build(&mut self, level: usize, parent_set: &mut CpuSet) -> Result<(), SyntheticError> {
        let (_, os) = self.next_os_index(level);
        let desc = self.desc;
        let l = &desc.levels[level];
        let mut set = CpuSet::new();
        if level + 1 == desc.levels.len() {
            set.set(os.unwrap_or(0));
        } else {
            let arity = desc.levels[level + 1].arity;
            for _ in 0..arity {
                self.build(level + 1, &mut set)?;
            }
        }
        parent_set.or_assign(&set);

        let ty = l.obj_type;
        if self.keeps(ty) {
            let mut obj = Object::with_cpuset(ty, os, set.clone());
            obj.gp_index = self.topo.alloc_gp_index();
            match ty {
                ObjType::Group => {
                    obj.attr = ObjAttr::Group(GroupAttr {
                        depth: 0,
                        kind: group_kind::SYNTHETIC,
                        subkind: l.group_depth.unwrap_or(1).wrapping_sub(1),
                        dont_merge: false,
                    });
                }
                ObjType::NUMANode => {
                    let node = os.unwrap_or(0);
                    obj.nodeset = Some(NodeSet::from_index(node));
                    obj.attr = numa_attr(l.size);
                }
                t if t.is_cache() => {
                    obj.attr = ObjAttr::Cache(CacheAttr {
                        size: l.size,
                        depth: t.cache_level().unwrap_or(1),
                        linesize: CACHE_LINESIZE,
                        associativity: 0,
                        kind: l.cache_kind.unwrap_or_default(),
                        inclusive: false,
                    });
                }
                _ => {}
            }
            self.topo.insert_by_cpuset(obj).map_err(topo_err)?;
            if ty == ObjType::NUMANode && l.memory_side_cache_size != 0 {
                self.insert_memcache(&set, os.unwrap_or(0), l.memory_side_cache_size)?;
            }
        }
        for a in &l.attached {
            self.insert_attached(a, &set)?;
        }
        Ok(())
    }

    fn insert_memcache(
        &mut self,
        set: &CpuSet,
        node: u32,
        size: u64,
    ) -> Result<(), SyntheticError> {
        if !self.keeps(ObjType::MemCache) {
            return Ok(());
        }
        let mut mc = Object::with_cpuset(ObjType::MemCache, None, set.clone());
        mc.gp_index = self.topo.alloc_gp_index();
        mc.nodeset = Some(NodeSet::from_index(node));
        mc.attr = ObjAttr::Cache(CacheAttr {
            size,
            depth: 1,
            linesize: CACHE_LINESIZE,
            associativity: 0,
            kind: CacheKind::Unified,
            inclusive: false,
        });
        self.topo.insert_by_cpuset(mc).map_err(topo_err)?;
        Ok(())
    }

    fn insert_attached(&mut self, a: &Attached, set: &CpuSet) -> Result<(), SyntheticError> {
        let n = self.next_attached;
        self.next_attached += 1;
        let os = match &self.desc.attached_indexes {
            Some(idx) => idx.get(n as usize).copied().unwrap_or(0),
            None => u32::try_from(n).unwrap_or(u32::MAX),
        };
        let mut node = Object::with_cpuset(ObjType::NUMANode, Some(os), set.clone());
        node.gp_index = self.topo.alloc_gp_index();
        node.nodeset = Some(NodeSet::from_index(os));
        node.attr = numa_attr(a.memory);
        self.topo.insert_by_cpuset(node).map_err(topo_err)?;
        if a.memory_side_cache_size != 0 {
            self.insert_memcache(set, os, a.memory_side_cache_size)?;
        }
        Ok(())
    }
}

fn numa_attr(memory: u64) -> ObjAttr {
    ObjAttr::Numa(NumaAttr {
        local_memory: memory,
        page_types: vec![PageType {
            size: PAGE_SIZE,
            count: memory / PAGE_SIZE,
        }],
    })
}

impl Description {
    /// Fills `topo` (a fresh topology whose type filters the caller has
    /// set) with the described objects, as hwloc's synthetic backend does,
    /// and finishes it.
    ///
    /// Objects are created depth-first, children before their parent, and
    /// inserted with [`Topology::insert_by_cpuset`]; attached NUMA nodes
    /// come after the object they are attached to.  PUs are numbered in
    /// order (or from `indexes=`) and their cpusets hold their OS index;
    /// Packages, Dies, Cores and NUMA nodes get their number in their level
    /// as OS index; caches and groups get none unless `indexes=` is given.
    /// Caches get a 64-byte line size; NUMA nodes a single 4 KiB page type;
    /// groups the kind [`group_kind::SYNTHETIC`] with their
    /// group depth minus one as subkind.  The topology infos
    /// `Backend=Synthetic` and `SyntheticDescription` are added, with the
    /// `discovery.pu`, `discovery.numa` and `discovery.numa_memory` supports.
    ///
    /// Fails with [`SyntheticErrorKind::TooLarge`] above the build budgets
    /// and with [`SyntheticErrorKind::Topology`] if the topology refuses an
    /// object or cannot be finished.
    pub fn build(&self, topo: Topology) -> Result<Topology, SyntheticError> {
        self.check_budget()?;
        let mut topo = topo;
        // The object count is known (and bounded by the budget): one
        // allocation for the arena instead of repeated growth.
        topo.reserve_objects(usize::try_from(self.object_count()).unwrap_or(0));
        let mut b = Builder {
            desc: self,
            topo,
            next: vec![0; self.levels.len()],
            next_attached: 0,
        };
        let mut all = CpuSet::new();
        if self.levels.len() > 1 {
            let arity = self.levels[1].arity;
            for _ in 0..arity {
                b.build(1, &mut all)?;
            }
        }
        if let Some(root) = self.levels.first() {
            for a in &root.attached {
                b.insert_attached(a, &all)?;
            }
        }
        let mut topo = b.topo;
        topo.infos.push(Info {
            name: String::from("Backend"),
            value: String::from("Synthetic"),
        });
        topo.infos.push(Info {
            name: String::from("SyntheticDescription"),
            value: String::from(self.info_text()),
        });
        for s in ["discovery.pu", "discovery.numa", "discovery.numa_memory"] {
            if !topo.support.iter().any(|x| x == s) {
                topo.support.push(String::from(s));
            }
        }
        topo.is_thissystem = false;
        topo.finish().map_err(topo_err)?;
        Ok(topo)
    }
}
