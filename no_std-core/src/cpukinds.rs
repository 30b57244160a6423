//! CPU kinds: sets of PUs that share a microarchitecture or efficiency.

use alloc::vec::Vec;

use crate::bitmap::CpuSet;
use crate::object::Info;

/// One kind of CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuKind {
    /// PUs of that kind.
    pub cpuset: CpuSet,
    /// Efficiency forced by the backend or the user, if any (higher is more efficient).
    pub forced_efficiency: Option<i32>,
    /// Rank computed when the topology is finished: 0 is the least efficient.
    pub efficiency: i32,
    /// Describing infos (`CoreType`, `FrequencyMaxMHz`, ...).
    pub infos: Vec<Info>,
}

impl CpuKind {
    /// A kind for a set of PUs.
    pub fn new(cpuset: CpuSet, forced_efficiency: Option<i32>, infos: Vec<Info>) -> Self {
        CpuKind {
            cpuset,
            forced_efficiency,
            efficiency: -1,
            infos,
        }
    }
}

/// Orders kinds from least to most efficient and numbers them.
///
/// With forced efficiencies on every kind, those decide; otherwise the
/// frequency infos (`FrequencyBaseMHz`, then `FrequencyMaxMHz`) do, as hwloc
/// ranks them; kinds that cannot be told apart keep an unknown efficiency (-1).
pub fn rank(kinds: &mut [CpuKind]) {
    if kinds.is_empty() {
        return;
    }
    let all_forced = kinds.iter().all(|k| k.forced_efficiency.is_some());
    let key = |k: &CpuKind| -> Option<i64> {
        if all_forced {
            return k.forced_efficiency.map(i64::from);
        }
        let find = |n: &str| {
            k.infos
                .iter()
                .find(|i| i.name == n)
                .and_then(|i| i.value.parse::<i64>().ok())
        };
        find("FrequencyBaseMHz").or_else(|| find("FrequencyMaxMHz"))
    };
    if kinds.iter().any(|k| key(k).is_none()) {
        for k in kinds.iter_mut() {
            k.efficiency = -1;
        }
        return;
    }
    kinds.sort_by_key(|k| key(k).unwrap_or(0));
    let mut rank = 0;
    let mut prev: Option<i64> = None;
    for k in kinds.iter_mut() {
        let v = key(k);
        if prev.is_some() && prev != v {
            rank += 1;
        }
        k.efficiency = rank;
        prev = v;
    }
}
