//! Groups built from a latency matrix, as hwloc's core does when a backend
//! adds distances: objects transitively connected by the smallest distance
//! form a Group, and the groups are grouped again with averaged distances.

use wloc_core::distances::kind as dist_kind;
use wloc_core::object::group_kind;
use wloc_core::topology::Inserted;
use wloc_core::{CpuSet, NodeSet, ObjId};

use crate::cpu::group;
use crate::ctx::Ctx;

/// Recursion bound: each level at least halves the number of objects.
const MAX_LEVELS: u32 = 64;

/// Assigns objects to groups of objects transitively connected by the
/// minimal distance.  Returns the group of each object (0 for none) and the
/// number of groups, or `None` when grouping is pointless.
fn find_groups_by_min_distance(n: usize, values: &[u64]) -> Option<(Vec<usize>, usize)> {
    let value = |i: usize, j: usize| values[i * n + j];
    let mut min = u64::MAX;
    for i in 0..n {
        for j in 0..n {
            if i != j && value(i, j) < min {
                min = value(i, j);
            }
        }
    }
    if min == u64::MAX {
        return None;
    }
    let mut ids = vec![0usize; n];
    let mut next_id = 1;
    let mut skipped = 0;
    for i in 0..n {
        if ids[i] != 0 {
            continue;
        }
        ids[i] = next_id;
        let mut size = 1;
        // Breadth-first: every member is scanned once.
        let mut queue = std::collections::VecDeque::from([i]);
        while let Some(j) = queue.pop_front() {
            for (k, id) in ids.iter_mut().enumerate() {
                if *id == 0 && value(j, k) == min {
                    *id = next_id;
                    size += 1;
                    queue.push_back(k);
                }
            }
        }
        if size == 1 {
            ids[i] = 0;
            skipped += 1;
            continue;
        }
        next_id += 1;
    }
    if next_id == 2 && skipped == 0 {
        return None;
    }
    Some((ids, next_id - 1))
}

/// Whether the matrix is symmetric with a strictly minimal diagonal.
fn check_matrix(n: usize, values: &[u64]) -> bool {
    for i in 0..n {
        for j in i + 1..n {
            if values[i * n + j] != values[j * n + i] || values[i * n + j] <= values[i * n + i] {
                return false;
            }
        }
    }
    true
}

impl Ctx<'_> {
    /// Groups `objs` (NUMA nodes or groups) by the latency matrix `values`.
    pub(crate) fn groups_by_distances(&mut self, objs: &[ObjId], values: &[u64], kind: u64) {
        self.groups_by_distances_rec(objs, values, kind, true, 0);
    }

    fn groups_by_distances_rec(
        &mut self,
        objs: &[ObjId],
        values: &[u64],
        kind: u64,
        needcheck: bool,
        level: u32,
    ) {
        let n = objs.len();
        if n <= 2 || kind & dist_kind::MEANS_LATENCY == 0 || level >= MAX_LEVELS {
            return;
        }
        if values.len() != n * n || (needcheck && !check_matrix(n, values)) {
            return;
        }
        let Some((ids, nbgroups)) = find_groups_by_min_distance(n, values) else {
            return;
        };
        let subkind = self.grouping_next_subkind;
        self.grouping_next_subkind += 1;
        let mut groupobjs: Vec<Option<ObjId>> = Vec::with_capacity(nbgroups);
        let mut sizes = vec![0u64; nbgroups];
        for (g, size) in sizes.iter_mut().enumerate() {
            let (mut c, mut cc) = (CpuSet::new(), CpuSet::new());
            let (mut ns, mut cns) = (NodeSet::new(), NodeSet::new());
            for (j, &obj) in objs.iter().enumerate() {
                if ids[j] != g + 1 {
                    continue;
                }
                *size += 1;
                let o = self.topo.obj(obj);
                if let Some(s) = &o.cpuset {
                    c = &c | s;
                }
                if let Some(s) = &o.complete_cpuset {
                    cc = &cc | s;
                }
                if let Some(s) = &o.nodeset {
                    ns = &ns | s;
                }
                if let Some(s) = &o.complete_nodeset {
                    cns = &cns | s;
                }
            }
            let mut obj = group(None, c, None, group_kind::DISTANCE, subkind, false);
            obj.complete_cpuset = Some(cc);
            obj.nodeset = Some(ns);
            obj.complete_nodeset = Some(cns);
            let res = match self.topo.insert_by_cpuset(obj) {
                Ok(Some(Inserted::New(id))) | Ok(Some(Inserted::Merged(id))) => Some(id),
                _ => None,
            };
            groupobjs.push(res);
        }
        if groupobjs.iter().any(|g| g.is_none()) {
            return;
        }
        let groupobjs: Vec<ObjId> = groupobjs.into_iter().flatten().collect();
        let mut gv = vec![0u64; nbgroups * nbgroups];
        for i in 0..n {
            if ids[i] == 0 {
                continue;
            }
            for j in 0..n {
                if ids[j] != 0 {
                    let slot = &mut gv[(ids[i] - 1) * nbgroups + ids[j] - 1];
                    *slot = slot.saturating_add(values[i * n + j]);
                }
            }
        }
        for i in 0..nbgroups {
            for j in 0..nbgroups {
                gv[i * nbgroups + j] /= (sizes[i] * sizes[j]).max(1);
            }
        }
        self.groups_by_distances_rec(&groupobjs, &gv, kind, false, level + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_transitive_groups() {
        // Two pairs close to each other.
        let v = [
            10, 20, 40, 40, 20, 10, 40, 40, 40, 40, 10, 20, 40, 40, 20, 10,
        ];
        assert!(check_matrix(4, &v));
        let (ids, n) = find_groups_by_min_distance(4, &v).unwrap();
        assert_eq!(n, 2);
        assert_eq!(ids, vec![1, 1, 2, 2]);
        // Everything at the same distance: one group, useless.
        let v = [10, 20, 20, 20, 10, 20, 20, 20, 10];
        assert!(find_groups_by_min_distance(3, &v).is_none());
        // Asymmetric.
        let v = [10, 20, 20, 21, 10, 20, 20, 20, 10];
        assert!(!check_matrix(3, &v));
    }
}
