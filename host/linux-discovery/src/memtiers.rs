//! Memory attributes from HMAT, and memory tiers: NUMA nodes of similar
//! kind and performance, whose kind (DRAM, HBM, NVM, ...) becomes the node
//! subtype, as hwloc guesses them.

use wloc_core::memattrs::{Initiator, MemAttr, PREDEFINED};
// The kinds, their names and the tier shape are the core's (one home
// with the C library's tiers of XML and synthetic topologies); the
// grouping rules below are the Linux discovery's.
use wloc_core::memtiers::{Tier, kind_name as kinds_name, kind_parse as kinds_parse, kinds};
use wloc_core::object::Depth;
use wloc_core::topology::MemTier;
use wloc_core::{CpuSet, NodeSet, ObjId};

use crate::ctx::Ctx;

struct NodeTierInfo {
    os: u32,
    kinds: u64,
    bw: u64,
    lat: u64,
    rank: usize,
}

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

    /// The value of a memory attribute for a node accessed from its own CPUs.
    fn local_value(&self, name: &str, node: ObjId, cpuset: &CpuSet) -> u64 {
        wloc_core::memtiers::local_value(&self.topo, name, node, cpuset)
    }

    fn forced_tiers(env: &str) -> Option<Vec<Tier>> {
        let mut tiers = Vec::new();
        for part in env.split(';').take(64) {
            let (set, kind) = part.split_once('=')?;
            let nodeset = NodeSet::parse(set.trim()).ok()?;
            if nodeset.is_empty() || nodeset.is_infinite() {
                return None;
            }
            tiers.push(Tier {
                nodeset,
                kinds: kinds_parse(kind.trim()),
                bw_min: 0,
                bw_max: 0,
            });
        }
        Some(tiers)
    }

    /// Groups NUMA nodes in tiers and names their kinds (once the tree is
    /// finished, with final node cpusets).
    pub(crate) fn build_memtiers(&mut self) {
        let nodes: Vec<ObjId> = self.topo.level(Depth::NumaNode).to_vec();
        if nodes.is_empty() {
            return;
        }
        let (tiers, force) = match &self.opts.memtiers {
            Some(env) => {
                if env == "none" {
                    return;
                }
                match Self::forced_tiers(env) {
                    Some(t) if !t.is_empty() => (t, true),
                    _ => return,
                }
            }
            None => match self.guess_tiers(&nodes) {
                Some(t) => (t, false),
                None => return,
            },
        };
        for &n in &nodes {
            let os = self.topo.obj(n).os_index.unwrap_or(u32::MAX);
            if let Some(t) = tiers.iter().find(|t| t.nodeset.is_set(os)) {
                let o = self.topo.obj_mut(n);
                if (o.subtype.is_none() || force)
                    && let Some(name) = kinds_name(t.kinds)
                {
                    o.subtype = Some(name.to_string());
                }
            }
        }
        self.topo.memtiers = tiers
            .into_iter()
            .map(|t| MemTier {
                kinds: t.kinds,
                nodeset: t.nodeset,
            })
            .collect();
    }

    fn guess_tiers(&self, nodes: &[ObjId]) -> Option<Vec<Tier>> {
        let mut infos: Vec<NodeTierInfo> = Vec::with_capacity(nodes.len());
        for &n in nodes {
            let o = self.topo.obj(n);
            let mut k = o.subtype.as_deref().map(kinds_parse).unwrap_or(0);
            if k == 0 {
                if let Some(d) = o.info("DAXType") {
                    k = kinds_parse(d);
                }
                if o.info("CXLDevice").is_some() {
                    k &= kinds::NVM;
                    k |= kinds::CXL;
                }
            }
            let cpuset = o.cpuset.clone().unwrap_or_default();
            infos.push(NodeTierInfo {
                os: o.os_index.unwrap_or(u32::MAX),
                kinds: k,
                bw: self.local_value("Bandwidth", n, &cpuset),
                lat: self.local_value("Latency", n, &cpuset),
                rank: 0,
            });
        }
        infos.sort_by(|a, b| a.kinds.cmp(&b.kinds).then(b.bw.cmp(&a.bw)));
        let ratio = |a: u64, b: u64| -> f32 {
            let r = a as f32 / b as f32;
            if r < 1.0 { 1.0 / r } else { r }
        };
        for i in 1..infos.len() {
            let prev = &infos[i - 1];
            let cur = &infos[i];
            let mut rank = prev.rank;
            if cur.kinds != prev.kinds
                || (cur.bw != 0 && prev.bw != 0 && ratio(cur.bw, prev.bw) > 1.1)
                || (cur.lat != 0 && prev.lat != 0 && ratio(cur.lat, prev.lat) > 1.1)
            {
                rank += 1;
            }
            infos[i].rank = rank;
        }
        let nr = infos.last().map(|i| i.rank + 1).unwrap_or(0);
        let mut tiers: Vec<Tier> = (0..nr)
            .map(|_| Tier {
                nodeset: NodeSet::new(),
                kinds: 0,
                bw_min: 0,
                bw_max: 0,
            })
            .collect();
        for i in &infos {
            let t = &mut tiers[i.rank];
            t.nodeset.set(i.os);
            t.kinds = i.kinds;
            if t.bw_min == 0 {
                t.bw_min = i.bw;
            }
            t.bw_max = i.bw;
        }
        self.guess_tier_kinds(&mut tiers);
        if tiers.len() == 1 && tiers[0].kinds == 0 {
            return None;
        }
        tiers.sort_by(|a, b| {
            if a.bw_min != 0 && b.bw_min != 0 {
                let (sa, sb) = (
                    a.bw_min as u128 + a.bw_max as u128,
                    b.bw_min as u128 + b.bw_max as u128,
                );
                if sa != sb {
                    return sb.cmp(&sa);
                }
            }
            a.kinds.cmp(&b.kinds)
        });
        Some(tiers)
    }

    fn guess_tier_kinds(&self, tiers: &mut [Tier]) {
        let mut spm_is_hbm = false;
        let mut node0_is_dram = false;
        if let Some(env) = &self.opts.memtiers_guess {
            if env == "none" {
                return;
            }
            if env == "all" {
                spm_is_hbm = true;
                node0_is_dram = true;
            }
            spm_is_hbm |= env.contains("spm_is_hbm");
            node0_is_dram |= env.contains("node0_is_dram");
        }
        if tiers.len() == 1 {
            return;
        }
        let unknown: Vec<usize> = (0..tiers.len()).filter(|&i| tiers[i].kinds == 0).collect();
        let spm: Vec<usize> = (0..tiers.len())
            .filter(|&i| tiers[i].kinds == kinds::SPM)
            .collect();
        let has_dram_or_hbm = tiers
            .iter()
            .any(|t| t.kinds == kinds::DRAM || t.kinds == kinds::HBM);
        if !has_dram_or_hbm {
            let pair = if unknown.len() == 2 && spm.is_empty() {
                Some((unknown[0], unknown[1]))
            } else if unknown.len() == 1 && spm.len() == 1 {
                Some((unknown[0], spm[0]))
            } else {
                None
            };
            if let Some((a, b)) = pair {
                guess_dram_hbm(tiers, a, b, node0_is_dram);
            }
        }
        if spm_is_hbm {
            for t in tiers.iter_mut() {
                if t.kinds == kinds::SPM {
                    t.kinds = kinds::HBM;
                }
            }
        }
        if node0_is_dram
            && let Some(t) = tiers
                .iter_mut()
                .find(|t| t.nodeset.is_set(0) && t.kinds == 0)
        {
            t.kinds = kinds::DRAM;
        }
    }
}

/// Two tiers whose bandwidths differ by more than 2x are DRAM and HBM.
fn guess_dram_hbm(tiers: &mut [Tier], a: usize, b: usize, node0_is_dram: bool) {
    if tiers[a].bw_min == 0 || tiers[b].bw_min == 0 {
        return;
    }
    let (lo, hi) = if tiers[a].bw_min > tiers[b].bw_min {
        (b, a)
    } else {
        (a, b)
    };
    if tiers[hi].bw_min <= tiers[lo].bw_max.saturating_mul(2) {
        return;
    }
    if node0_is_dram && tiers[hi].nodeset.is_set(0) {
        return;
    }
    tiers[lo].kinds = kinds::DRAM;
    tiers[hi].kinds = kinds::HBM;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in [
            kinds::DRAM,
            kinds::HBM,
            kinds::GPU,
            kinds::SPM,
            kinds::NVM,
            kinds::CXL | kinds::NVM,
        ] {
            assert_eq!(kinds_parse(kinds_name(k).unwrap()), k);
        }
        assert_eq!(kinds_name(kinds::CXL), Some("CXL-DRAM"));
        assert_eq!(kinds_name(0), None);
        assert!(Ctx::forced_tiers("0x1=DRAM;0x6=HBM").is_some());
        assert!(Ctx::forced_tiers("0x0=DRAM").is_none());
        assert!(Ctx::forced_tiers("garbage").is_none());
    }
}
