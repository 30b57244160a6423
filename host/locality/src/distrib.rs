//! hwloc-distrib's distribution: `n` CPU sets spread over a topology as
//! evenly as its structure allows (hwloc_distrib).

use wloc_core::object::Depth;
use wloc_core::{CpuSet, ObjId, ObjKind, Topology};

/// Consecutive equal sets: the output as runs, so that distributing a
/// huge number of tasks stays cheap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs(pub Vec<(CpuSet, u64)>);

impl Runs {
    fn push(&mut self, set: &CpuSet, count: u64) {
        if count > 0 {
            self.0.push((set.clone(), count));
        }
    }

    /// Merges `set` into the last set given out.
    fn or_last(&mut self, set: &CpuSet) {
        if let Some((last, count)) = self.0.last_mut() {
            if *count > 1 {
                *count -= 1;
                let merged = last.or(set);
                self.0.push((merged, 1));
            } else {
                last.or_assign(set);
            }
        }
    }

    /// The number of sets.
    pub fn len(&self) -> u64 {
        self.0.iter().map(|(_, c)| c).sum()
    }

    /// Whether no set was given out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every set, in order.
    pub fn iter(&self) -> impl Iterator<Item = &CpuSet> + '_ {
        self.0
            .iter()
            .flat_map(|(s, c)| std::iter::repeat_n(s, *c as usize))
    }
}

/// Distributes `n` sets over `roots`, going down the tree no deeper than
/// `until` (a normal depth), in reverse order with `reverse`.  Each root
/// gets a share proportional to its number of PUs; a root whose share is
/// one set, or that has no children, or that is at `until`, gives its
/// whole CPU set to each of its sets; a root whose share rounds to zero
/// merges its PUs into the set before.
pub fn distribute(topo: &Topology, roots: &[ObjId], n: u64, until: u32, reverse: bool) -> Runs {
    let mut runs = Runs::default();
    distrib_rec(topo, roots, n, until, reverse, &mut runs);
    runs
}

fn weight(set: &CpuSet) -> u64 {
    set.weight().map(u64::from).unwrap_or(0)
}

fn distrib_rec(
    topo: &Topology,
    roots: &[ObjId],
    n: u64,
    until: u32,
    reverse: bool,
    out: &mut Runs,
) {
    let empty = CpuSet::new();
    let cpuset_of = |id: ObjId| topo.obj(id).cpuset.as_ref().unwrap_or(&empty);
    let tot: u64 = roots.iter().map(|&r| weight(cpuset_of(r))).sum();
    if tot == 0 {
        return;
    }
    let mut given = 0u64;
    let mut given_weight = 0u64;
    for i in 0..roots.len() {
        let mut root = roots[if reverse { roots.len() - 1 - i } else { i }];
        let cpuset = cpuset_of(root).clone();
        // Memory, I/O and Misc roots stand for their normal parent.
        while topo.obj(root).kind() != ObjKind::Normal {
            match topo.obj(root).parent() {
                Some(p) => root = p,
                None => break,
            }
        }
        let w = weight(&cpuset);
        if w == 0 {
            continue;
        }
        let chunk = ((given_weight + w) * n).div_ceil(tot) - (given_weight * n).div_ceil(tot);
        let r = topo.obj(root);
        let depth = match r.depth() {
            Depth::Normal(d) => d,
            _ => u32::MAX,
        };
        if r.children().is_empty() || chunk <= 1 || depth >= until {
            if chunk > 0 {
                out.push(&cpuset, chunk);
            } else if given > 0 || !out.is_empty() {
                out.or_last(&cpuset);
            }
        } else {
            distrib_rec(topo, r.children(), chunk, until, reverse, out);
        }
        given += chunk;
        given_weight += w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synth(desc: &str) -> Topology {
        wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap()
    }

    fn strings(topo: &Topology, n: u64, reverse: bool) -> Vec<String> {
        let roots = topo.level(Depth::Normal(0)).to_vec();
        distribute(topo, &roots, n, u32::MAX, reverse)
            .iter()
            .map(|s| s.to_hwloc_string())
            .collect()
    }

    #[test]
    fn spreads_over_packages_then_cores() {
        let t = synth("pack:2 core:2 pu:2");
        assert_eq!(
            strings(&t, 4, false),
            ["0x00000003", "0x0000000c", "0x00000030", "0x000000c0"]
        );
        assert_eq!(strings(&t, 2, false), ["0x0000000f", "0x000000f0"]);
        assert_eq!(strings(&t, 2, true), ["0x000000f0", "0x0000000f"]);
    }

    #[test]
    fn more_tasks_than_pus_repeat() {
        let t = synth("pack:1 core:2 pu:1");
        assert_eq!(
            strings(&t, 4, false),
            ["0x00000001", "0x00000001", "0x00000002", "0x00000002"]
        );
        let roots = t.level(Depth::Normal(0)).to_vec();
        assert_eq!(
            distribute(&t, &roots, 1_000_000_000, u32::MAX, false).len(),
            1_000_000_000
        );
    }

    #[test]
    fn zero_share_merges_into_previous() {
        let t = synth("pack:3 pu:1");
        assert_eq!(strings(&t, 2, false), ["0x00000001", "0x00000006"]);
    }
}
