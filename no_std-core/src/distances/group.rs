//! The Group objects hwloc builds from a latency matrix
//! (`HWLOC_DISTANCES_ADD_FLAG_GROUP`): objects transitively connected by
//! the smallest distance form a Group, then those Groups are grouped again
//! with the averaged distances.

use alloc::vec;
use alloc::vec::Vec;

use super::{Distances, kind};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::{GroupAttr, ObjAttr, ObjType, Object, group_kind};
use crate::topology::Topology;

/// The accuracies hwloc tries when it groups: 0 only, unless the
/// inaccurate flag lets `HWLOC_GROUPING_ACCURACY` (`env`) choose one
/// value, or `try` the list.
pub fn accuracies(inaccurate: bool, env: Option<&str>) -> Vec<f32> {
    const TRY: [f32; 5] = [0.0, 0.01, 0.02, 0.05, 0.1];
    if !inaccurate {
        return vec![0.0];
    }
    match env {
        None => vec![0.0],
        Some("try") => TRY.to_vec(),
        Some(v) => vec![v.trim().parse::<f32>().unwrap_or(0.0)],
    }
}

/// Compares two values, equal within `accuracy` (relative to `a`).
fn compare(a: u64, b: u64, accuracy: f32) -> core::cmp::Ordering {
    let diff = (a as f32) - (b as f32);
    let diff = if diff < 0.0 { -diff } else { diff };
    if accuracy != 0.0 && diff < (a as f32) * accuracy {
        return core::cmp::Ordering::Equal;
    }
    a.cmp(&b)
}

/// A matrix hwloc groups from: symmetric, each diagonal value strictly
/// smaller than the rest of its row.
fn groupable(n: usize, v: &[u64], accuracy: f32) -> bool {
    (0..n).all(|i| {
        (i + 1..n).all(|j| {
            compare(v[i * n + j], v[j * n + i], accuracy).is_eq()
                && compare(v[i * n + j], v[i * n + i], accuracy).is_gt()
        })
    })
}

/// Puts objects connected (transitively) by the smallest off-diagonal
/// value in the same group. Returns each object's group (0: none) and the
/// number of groups; no groups when one group would hold everything.
fn groups_by_min_distance(n: usize, v: &[u64], accuracy: f32) -> (Vec<usize>, usize) {
    let mut ids = vec![0usize; n];
    let min = (0..n)
        .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
        .map(|(i, j)| v[i * n + j])
        .min();
    let Some(min) = min else {
        return (ids, 0);
    };
    let (mut next, mut skipped) = (1usize, 0usize);
    for i in 0..n {
        if ids[i] != 0 {
            continue;
        }
        ids[i] = next;
        let mut size = 1;
        let mut frontier = vec![i];
        while !frontier.is_empty() {
            let mut found = Vec::new();
            for &j in &frontier {
                for k in 0..n {
                    if ids[k] == 0 && compare(v[j * n + k], min, accuracy).is_eq() {
                        ids[k] = next;
                        size += 1;
                        found.push(k);
                    }
                }
            }
            frontier = found;
        }
        if size == 1 {
            ids[i] = 0;
            skipped += 1;
        } else {
            next += 1;
        }
    }
    if next == 2 && skipped == 0 {
        return (vec![0; n], 0);
    }
    (ids, next - 1)
}

/// The sets of one object or group being grouped.
#[derive(Clone, Default)]
struct Sets {
    cpuset: CpuSet,
    complete_cpuset: CpuSet,
    nodeset: NodeSet,
    complete_nodeset: NodeSet,
}

impl Sets {
    fn of(o: &Object) -> Sets {
        Sets {
            cpuset: o.cpuset.clone().unwrap_or_default(),
            complete_cpuset: o.complete_cpuset.clone().unwrap_or_default(),
            nodeset: o.nodeset.clone().unwrap_or_default(),
            complete_nodeset: o.complete_nodeset.clone().unwrap_or_default(),
        }
    }

    fn add(&mut self, o: &Sets) {
        self.cpuset = &self.cpuset | &o.cpuset;
        self.complete_cpuset = &self.complete_cpuset | &o.complete_cpuset;
        self.nodeset = &self.nodeset | &o.nodeset;
        self.complete_nodeset = &self.complete_nodeset | &o.complete_nodeset;
    }
}

/// The subkind of the next round of distance Groups (hwloc counts rounds
/// per topology; the largest subkind in use tells where it is).
fn next_subkind(m: &Topology) -> u32 {
    m.objs_by_type(ObjType::Group)
        .iter()
        .filter_map(|&g| m.obj(g).group().filter(|a| a.kind == group_kind::DISTANCE))
        .map(|a| a.subkind + 1)
        .max()
        .unwrap_or(0)
}

/// hwloc's `hwloc__groups_by_distances` on `m` (not finished yet):
/// inserts a Group for each set of closest objects, then groups those
/// Groups with the averaged matrix, until one group would hold all.
/// Returns whether any Group was inserted.
pub fn group_by_distances(m: &mut Topology, d: &Distances, accuracies: &[f32]) -> bool {
    if d.kind & kind::MEANS_LATENCY == 0 {
        // As hwloc: only latencies say what is close.
        return false;
    }
    let items: Vec<Sets> = d.objs.iter().map(|&o| Sets::of(m.obj(o))).collect();
    let mut inserted = false;
    group_level(m, items, d.values.clone(), accuracies, true, &mut inserted);
    inserted
}

fn group_level(
    m: &mut Topology,
    items: Vec<Sets>,
    values: Vec<u64>,
    accuracies: &[f32],
    check: bool,
    inserted: &mut bool,
) {
    let n = items.len();
    if n <= 2 {
        return;
    }
    let mut found = None;
    for &a in accuracies {
        if check && !groupable(n, &values, a) {
            continue;
        }
        let (ids, nb) = groups_by_min_distance(n, &values, a);
        if nb > 0 {
            found = Some((ids, nb));
            break;
        }
    }
    let Some((ids, nb)) = found else {
        return;
    };
    let subkind = next_subkind(m);
    let mut groups = vec![Sets::default(); nb];
    let mut sizes = vec![0u64; nb];
    for (i, item) in items.iter().enumerate() {
        if ids[i] > 0 {
            groups[ids[i] - 1].add(item);
            sizes[ids[i] - 1] += 1;
        }
    }
    let mut failed = false;
    for g in &groups {
        let ok = insert_group(m, g, subkind);
        *inserted |= ok;
        failed |= !ok;
    }
    if failed {
        // As hwloc: an incomplete level is kept, nothing is built above.
        return;
    }
    let mut gv = vec![0u64; nb * nb];
    for i in (0..n).filter(|&i| ids[i] > 0) {
        for j in (0..n).filter(|&j| ids[j] > 0) {
            let cell = &mut gv[(ids[i] - 1) * nb + ids[j] - 1];
            *cell = cell.wrapping_add(values[i * n + j]);
        }
    }
    for i in 0..nb {
        for j in 0..nb {
            gv[i * nb + j] /= sizes[i] * sizes[j];
        }
    }
    group_level(m, groups, gv, accuracies, false, inserted);
}

/// Inserts one distance Group by its sets; false if it could not be.
fn insert_group(m: &mut Topology, s: &Sets, subkind: u32) -> bool {
    if s.cpuset.is_empty() && s.complete_cpuset.is_empty() {
        return false;
    }
    let mut o = Object::new(ObjType::Group, None);
    o.cpuset = Some(s.cpuset.clone());
    o.complete_cpuset = Some(s.complete_cpuset.clone());
    o.nodeset = Some(s.nodeset.clone());
    o.complete_nodeset = Some(s.complete_nodeset.clone());
    o.attr = ObjAttr::Group(GroupAttr {
        depth: 0,
        kind: group_kind::DISTANCE,
        subkind,
        dont_merge: false,
    });
    matches!(m.insert_by_cpuset(o), Ok(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_distance_groups_follow_hwloc() {
        // Two pairs, then everything: two groups.
        let v = [1, 4, 8, 8, 4, 1, 8, 8, 8, 8, 1, 4, 8, 8, 4, 1];
        assert!(groupable(4, &v, 0.0));
        assert_eq!(groups_by_min_distance(4, &v, 0.0), (vec![1, 1, 2, 2], 2));
        // All equally close: no group.
        let flat = [1, 3, 3, 3, 1, 3, 3, 3, 1];
        assert_eq!(groups_by_min_distance(3, &flat, 0.0).1, 0);
        // Asymmetric matrices are not grouped.
        assert!(!groupable(2, &[1, 2, 3, 1], 0.0));
        assert!(groupable(2, &[10, 20, 21, 10], 0.1));
    }

    #[test]
    fn accuracies_follow_the_environment_only_when_inaccurate() {
        assert_eq!(accuracies(false, Some("try")), vec![0.0]);
        assert_eq!(accuracies(true, Some("try")).len(), 5);
        assert_eq!(accuracies(true, Some("0.05")), vec![0.05]);
        assert_eq!(accuracies(true, None), vec![0.0]);
    }
}
