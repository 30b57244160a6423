//! Memory attributes from HMAT, and memory tiers: NUMA nodes of similar
//! kind and performance, whose kind (DRAM, HBM, NVM, ...) becomes the node
//! subtype, grouped and named by hwloc 2.14's rules, which live in the
//! core ([`wloc_core::memtiers`]).

use wloc_core::ObjId;
use wloc_core::memattrs::Initiator;
use wloc_core::memattrs::{MemAttr, PREDEFINED};
use wloc_core::memtiers;
use wloc_core::object::Depth;
use wloc_core::topology::MemTier;

use crate::ctx::Ctx;

impl Ctx<'_> {
    /// Stores the bandwidths and latencies read from sysfs.
    pub(crate) fn commit_memattrs(&mut self) {
        for p in std::mem::take(&mut self.pending_memattrs) {
            let flags = PREDEFINED
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, f)| *f)
                .unwrap_or(0);
            let idx = match self.topo.memattrs.iter().position(|m| m.name == p.name) {
                Some(i) => i,
                None => {
                    self.topo.memattrs.push(MemAttr::new(p.name, flags));
                    self.topo.memattrs.len() - 1
                }
            };
            self.topo.memattrs[idx].set(p.node, Some(Initiator::CpuSet(p.initiator)), p.value);
        }
    }

    /// Memory tiers by hwloc 2.14's rules ([`wloc_core::memtiers`], the
    /// one home of those rules, shared with the C library's XML and
    /// synthetic topologies), once the tree is finished with its final
    /// node cpusets: `HWLOC_MEMTIERS` forces them (`none`: no tiers; a
    /// value that does not parse falls back to guessing, as in hwloc),
    /// else they are guessed.  Nodes get their tier's kind as subtype
    /// (kept when they have one, unless forced or `HWLOC_MEMTIERS_REFRESH`
    /// is set) and, with several tiers, `MemoryTier` infos; the root
    /// `MemoryTiersNr`.
    pub(crate) fn build_memtiers(&mut self) {
        let o = self.opts;
        let forced = match o.memtiers.as_deref() {
            Some("none") => return,
            Some(v) => memtiers::forced(v),
            None => None,
        };
        let (tiers, force) = match forced {
            Some(t) => (t, true),
            None => {
                let opts = memtiers::Options::from_values(
                    o.memtiers_guess.as_deref(),
                    o.memtiers_bandwidth_threshold.as_deref(),
                    o.memtiers_latency_threshold.as_deref(),
                );
                // The nodes hwloc keeps: the tree may still hold the
                // disallowed ones, which the host removes later.
                let allowed = &self.topo.allowed_nodeset;
                let nodes: Vec<ObjId> = self
                    .topo
                    .level(Depth::NumaNode)
                    .iter()
                    .copied()
                    .filter(|&n| {
                        self.topo
                            .obj(n)
                            .os_index
                            .is_some_and(|os| allowed.is_set(os))
                    })
                    .collect();
                match memtiers::guess_among(&self.topo, &nodes, &opts) {
                    Some(t) => (t, o.memtiers_refresh),
                    None => return,
                }
            }
        };
        memtiers::apply(&mut self.topo, &tiers, force);
        // hwloc adds the count once discovery is over, after the infos of
        // the whole topology (Backend, OSName, ...): it goes with those.
        let root = self.topo.root_mut();
        if let Some(i) = root.infos.iter().position(|i| i.name == "MemoryTiersNr") {
            let info = root.infos.remove(i);
            self.topo.infos.retain(|i| i.name != "MemoryTiersNr");
            self.topo.infos.push(info);
        }
        // A single tier of unknown kind tells nothing: the model's list
        // (exported as hwloc 3's memtiers) stays empty then.
        if tiers.len() == 1 && tiers[0].kinds == 0 {
            return;
        }
        self.topo.memtiers = tiers
            .into_iter()
            .map(|t| MemTier {
                kinds: t.kinds,
                nodeset: t.nodeset,
            })
            .collect();
    }
}
