//! CPU kinds: sets of PUs that share a microarchitecture or efficiency.

use alloc::collections::BTreeSet;
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

/// How CPU kinds are ranked (hwloc's `HWLOC_CPUKINDS_RANKING` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ranking {
    /// Forced efficiencies, else frequency on ARM and core type + frequency elsewhere.
    #[default]
    Default,
    /// The default without forced efficiencies.
    NoForcedEfficiency,
    /// Forced efficiencies only.
    ForcedEfficiency,
    /// Intel core type, then frequency.
    CoreTypeFrequency,
    /// `coretype+frequency_strict`: both the core type and a frequency.
    CoreTypeFrequencyStrict,
    /// Intel core type only.
    CoreType,
    /// Base frequency if every kind has one, else maximal frequency.
    Frequency,
    /// Maximal frequency.
    FrequencyMax,
    /// Base frequency.
    FrequencyBase,
    /// Do not rank.
    None,
}

impl Ranking {
    /// Parses the values of `HWLOC_CPUKINDS_RANKING`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "default" => Ranking::Default,
            "no_forced_efficiency" => Ranking::NoForcedEfficiency,
            "forced_efficiency" => Ranking::ForcedEfficiency,
            "coretype+frequency" => Ranking::CoreTypeFrequency,
            "coretype+frequency_strict" => Ranking::CoreTypeFrequencyStrict,
            "coretype" => Ranking::CoreType,
            "frequency" => Ranking::Frequency,
            "frequency_max" => Ranking::FrequencyMax,
            "frequency_base" => Ranking::FrequencyBase,
            "none" => Ranking::None,
            _ => return None,
        })
    }
}

/// What the infos of one kind say.
#[derive(Default, Clone, Copy)]
struct Summary {
    intel_core_type: u64,
    max_freq: u64,
    base_freq: u64,
}

fn summarize(k: &CpuKind) -> Summary {
    let mut s = Summary::default();
    for i in &k.infos {
        match i.name.as_str() {
            "FrequencyMaxMHz" => s.max_freq = leading_number(&i.value),
            "FrequencyBaseMHz" => s.base_freq = leading_number(&i.value),
            "CoreType" if i.value == "IntelAtom" => s.intel_core_type = 1,
            "CoreType" if i.value == "IntelCore" => s.intel_core_type = 2,
            _ => {}
        }
    }
    s
}

/// The number at the start of a string, as C's `atoi` reads it (0 if none).
fn leading_number(v: &str) -> u64 {
    let v = v.trim_start();
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    v[..end].parse().unwrap_or(0)
}

fn by_info(kinds: &[CpuKind], how: Ranking) -> Option<Vec<i64>> {
    let sums: Vec<Summary> = kinds.iter().map(summarize).collect();
    let all = |f: fn(&Summary) -> u64| sums.iter().all(|s| f(s) != 0);
    let (have_type, have_max, have_base) = (
        all(|s| s.intel_core_type),
        all(|s| s.max_freq),
        all(|s| s.base_freq),
    );
    let freq = |s: &Summary| if have_base { s.base_freq } else { s.max_freq };
    let values: Vec<u64> = match how {
        // The core type, the frequency, or both: what is missing counts 0.
        Ranking::CoreTypeFrequency if have_type || have_max || have_base => sums
            .iter()
            .map(|s| (s.intel_core_type << 20) + freq(s))
            .collect(),
        Ranking::CoreTypeFrequencyStrict if have_type && (have_max || have_base) => sums
            .iter()
            .map(|s| (s.intel_core_type << 20) + freq(s))
            .collect(),
        Ranking::CoreType if have_type => sums.iter().map(|s| s.intel_core_type << 20).collect(),
        Ranking::Frequency if have_max || have_base => sums.iter().map(freq).collect(),
        Ranking::FrequencyMax if have_max => sums.iter().map(|s| s.max_freq).collect(),
        Ranking::FrequencyBase if have_base => sums.iter().map(|s| s.base_freq).collect(),
        _ => return None,
    };
    Some(values.into_iter().map(|v| v as i64).collect())
}

fn forced(kinds: &[CpuKind]) -> Option<Vec<i64>> {
    kinds
        .iter()
        .map(|k| k.forced_efficiency.map(i64::from))
        .collect()
}

/// Orders kinds from least to most efficient and numbers them 0 to N-1, as
/// hwloc does.  Ranking values must all differ; when no heuristic gives
/// distinct values, every efficiency is unknown (-1) and the order is kept.
/// `arch` is the machine's `Architecture` info (ARM ranks by frequency).
pub fn rank(kinds: &mut [CpuKind], how: Ranking, arch: Option<&str>) {
    match kinds.len() {
        0 => return,
        1 => {
            kinds[0].efficiency = 0;
            return;
        }
        _ => {}
    }
    let distinct = |v: &Vec<i64>| {
        let mut s = v.clone();
        s.sort_unstable();
        s.windows(2).all(|w| w[0] != w[1])
    };
    let try_one = |v: Option<Vec<i64>>| v.filter(distinct);
    let values = match how {
        Ranking::Default | Ranking::NoForcedEfficiency => {
            let f = if how == Ranking::Default {
                try_one(forced(kinds))
            } else {
                None
            };
            f.or_else(|| {
                let arm = arch.is_some_and(|a| a.starts_with("arm") || a.starts_with("aarch"));
                let sub = if arm {
                    Ranking::Frequency
                } else {
                    Ranking::CoreTypeFrequency
                };
                try_one(by_info(kinds, sub))
            })
        }
        Ranking::ForcedEfficiency => try_one(forced(kinds)),
        Ranking::None => None,
        other => try_one(by_info(kinds, other)),
    };
    match values {
        Some(v) => {
            let mut order: Vec<usize> = (0..kinds.len()).collect();
            order.sort_by_key(|&i| v[i]);
            let mut sorted: Vec<CpuKind> = order.iter().map(|&i| kinds[i].clone()).collect();
            for (rank, k) in sorted.iter_mut().enumerate() {
                k.efficiency = rank as i32;
            }
            kinds.clone_from_slice(&sorted);
        }
        None => {
            for k in kinds.iter_mut() {
                k.efficiency = -1;
            }
        }
    }
}

/// Registers a kind of CPU as hwloc's `hwloc_cpukinds_register` does
/// (`hwloc_internal_cpukinds_register` with forced efficiencies
/// overwritten): an existing kind inside `cpuset` (or equal to it) gets
/// the new infos (pairs it already has are skipped) and the efficiency;
/// an existing kind that `cpuset` cuts is split, the cut part becoming a
/// new kind (appended) with the old infos, the new ones and the new
/// efficiency; PUs in no kind yet form a last new kind.  An empty
/// `cpuset` registers nothing and returns false.  Kinds are not ranked
/// here: call [`rank`] afterwards, as hwloc does.
#[doc(alias = "hwloc_cpukinds_register")]
pub fn register(
    kinds: &mut Vec<CpuKind>,
    cpuset: &CpuSet,
    forced_efficiency: Option<i32>,
    infos: &[Info],
) -> bool {
    if cpuset.is_empty() {
        return false;
    }
    let add_infos = |k: &mut CpuKind, infos: &[Info]| add_new_infos(&mut k.infos, infos);
    let mut rest = cpuset.clone();
    let mut added: Vec<CpuKind> = Vec::new();
    for k in kinds.iter_mut() {
        if !rest.intersects(&k.cpuset) {
            continue;
        }
        if rest.includes(&k.cpuset) {
            // The kind lies inside the new set: it is described further.
            add_infos(k, infos);
            k.forced_efficiency = forced_efficiency;
            rest.and_not_assign(&k.cpuset);
        } else {
            // The new set cuts the kind: the common part becomes a kind.
            let mut cut = CpuKind::new(&rest & &k.cpuset, forced_efficiency, Vec::new());
            add_new_infos(&mut cut.infos, &k.infos);
            add_infos(&mut cut, infos);
            k.cpuset.and_not_assign(&cut.cpuset);
            rest.and_not_assign(&cut.cpuset);
            added.push(cut);
        }
        if rest.is_empty() {
            break;
        }
    }
    kinds.extend(added);
    if !rest.is_empty() {
        let mut k = CpuKind::new(rest, forced_efficiency, Vec::new());
        add_infos(&mut k, infos);
        kinds.push(k);
    }
    true
}

/// Appends the pairs of `new` that `have` lacks (each once), in order.
/// A sorted index of the pairs makes it O((n + m) log(n + m)), not
/// O(n * m): a kind may carry thousands of infos.
fn add_new_infos(have: &mut Vec<Info>, new: &[Info]) {
    let mut seen: BTreeSet<(&str, &str)> = have
        .iter()
        .map(|i| (i.name.as_str(), i.value.as_str()))
        .collect();
    let extra: Vec<Info> = new
        .iter()
        .filter(|i| seen.insert((i.name.as_str(), i.value.as_str())))
        .cloned()
        .collect();
    drop(seen);
    have.extend(extra);
}

/// An upper bound on the infos `kinds` hold once `register(kinds, cpuset,
/// _, infos)` has run, computed without running it: each kind that
/// `cpuset` touches may gain `infos` and, when cut, a copy of its own
/// infos; the PUs in no kind may form one more kind.  Lets a caller
/// refuse a registration whose splitting would cost too much.
pub fn infos_after_register(kinds: &[CpuKind], cpuset: &CpuSet, infos: &[Info]) -> usize {
    let mut total = infos.len();
    for k in kinds {
        total = total.saturating_add(k.infos.len());
        if cpuset.intersects(&k.cpuset) {
            total = total
                .saturating_add(k.infos.len())
                .saturating_add(infos.len());
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn kind(first: u32, forced: Option<i32>, infos: &[(&str, &str)]) -> CpuKind {
        let infos = infos
            .iter()
            .map(|(n, v)| Info {
                name: (*n).into(),
                value: (*v).into(),
            })
            .collect();
        CpuKind::new(CpuSet::from_index(first), forced, infos)
    }

    #[test]
    fn forced_efficiencies_rank_when_distinct() {
        let mut k = vec![
            kind(0, Some(7), &[]),
            kind(1, Some(0), &[]),
            kind(2, Some(10), &[]),
        ];
        rank(&mut k, Ranking::Default, None);
        let firsts: Vec<_> = k.iter().map(|k| (k.cpuset.first(), k.efficiency)).collect();
        assert_eq!(firsts, vec![(Some(1), 0), (Some(0), 1), (Some(2), 2)]);
    }

    #[test]
    fn ties_leave_efficiencies_unknown_and_order_unchanged() {
        let mut k = vec![
            kind(0, Some(1), &[]),
            kind(1, Some(0), &[]),
            kind(2, Some(0), &[]),
        ];
        rank(&mut k, Ranking::Default, None);
        assert!(k.iter().all(|k| k.efficiency == -1));
        assert_eq!(k[0].cpuset.first(), Some(0));
    }

    #[test]
    fn core_type_then_frequency_off_arm_frequency_on_arm() {
        let mk = || {
            vec![
                kind(
                    0,
                    None,
                    &[("CoreType", "IntelCore"), ("FrequencyMaxMHz", "3000")],
                ),
                kind(
                    1,
                    None,
                    &[("CoreType", "IntelAtom"), ("FrequencyMaxMHz", "4000")],
                ),
            ]
        };
        let mut k = mk();
        rank(&mut k, Ranking::Default, Some("x86_64"));
        assert_eq!(k[0].cpuset.first(), Some(1)); // Atom is the least efficient
        let mut k = mk();
        rank(&mut k, Ranking::Default, Some("aarch64"));
        assert_eq!(k[0].cpuset.first(), Some(0)); // lower frequency first on ARM
    }

    #[test]
    fn frequency_alone_ranks_without_core_types_unless_strict() {
        // hwloc's 20em64t-hybrid recording: no CoreType infos, base and
        // maximum frequencies.
        let mk = || {
            vec![
                kind(
                    0,
                    None,
                    &[("FrequencyMaxMHz", "3900"), ("FrequencyBaseMHz", "1400")],
                ),
                kind(
                    1,
                    None,
                    &[("FrequencyMaxMHz", "5000"), ("FrequencyBaseMHz", "1900")],
                ),
            ]
        };
        let mut k = mk();
        rank(&mut k, Ranking::Default, Some("x86_64"));
        let effs: Vec<_> = k.iter().map(|k| (k.cpuset.first(), k.efficiency)).collect();
        assert_eq!(effs, vec![(Some(0), 0), (Some(1), 1)]);
        let mut k = mk();
        rank(&mut k, Ranking::CoreTypeFrequencyStrict, Some("x86_64"));
        assert!(k.iter().all(|k| k.efficiency == -1));
        assert_eq!(
            Ranking::parse("coretype+frequency_strict"),
            Some(Ranking::CoreTypeFrequencyStrict)
        );
    }

    /// 63 one-PU kinds and one over all of them, each with 4,096
    /// distinct infos: the last registration extends 63 kinds with 4,096
    /// infos each, which must not compare every pair of infos.
    #[test]
    fn registering_many_infos_is_not_quadratic() {
        extern crate std;
        use alloc::format;
        let infos = |k: u32| -> Vec<Info> {
            (0..4096)
                .map(|i| Info {
                    name: format!("{k}-{i:0>40}"),
                    value: format!("{i}"),
                })
                .collect()
        };
        let mut kinds = Vec::new();
        for k in 0..63 {
            assert!(register(
                &mut kinds,
                &CpuSet::from_index(k),
                None,
                &infos(k)
            ));
        }
        let all = CpuSet::from_u64((1u64 << 63) - 1);
        let last = infos(63);
        let bound = infos_after_register(&kinds, &all, &last);
        let start = std::time::Instant::now();
        assert!(register(&mut kinds, &all, None, &last));
        let took = start.elapsed();
        assert_eq!(kinds.len(), 63);
        assert!(kinds.iter().all(|k| k.infos.len() == 8192));
        let total: usize = kinds.iter().map(|k| k.infos.len()).sum();
        assert!(total <= bound, "{total} > {bound}");
        // About 0.2 s here (release, loaded machine); comparing every pair of infos takes tens of seconds.
        assert!(took.as_secs() < 3, "took {took:?}");
    }

    #[test]
    fn register_splits_and_extends_kinds_as_hwloc() {
        use alloc::string::ToString;
        let info = |n: &str, v: &str| Info {
            name: n.to_string(),
            value: v.to_string(),
        };
        let mut kinds = Vec::new();
        assert!(!register(&mut kinds, &CpuSet::new(), None, &[]));
        assert!(register(
            &mut kinds,
            &CpuSet::from_u64(0xff),
            Some(1),
            &[info("A", "a")]
        ));
        // Cuts the first kind: the cut part is appended.
        assert!(register(
            &mut kinds,
            &CpuSet::from_u64(0x30f),
            None,
            &[info("B", "b")]
        ));
        assert_eq!(kinds.len(), 3);
        assert_eq!(kinds[0].cpuset, CpuSet::from_u64(0xf0));
        assert_eq!(kinds[0].forced_efficiency, Some(1));
        assert_eq!(kinds[1].cpuset, CpuSet::from_u64(0x0f));
        assert_eq!(kinds[1].forced_efficiency, None);
        assert_eq!(kinds[1].infos, [info("A", "a"), info("B", "b")]);
        assert_eq!(kinds[2].cpuset, CpuSet::from_u64(0x300));
        // Contains the second kind: it is extended in place, without duplicates.
        assert!(register(
            &mut kinds,
            &CpuSet::from_u64(0x0f),
            Some(3),
            &[info("A", "a")]
        ));
        assert_eq!(kinds.len(), 3);
        assert_eq!(kinds[1].forced_efficiency, Some(3));
        assert_eq!(kinds[1].infos.len(), 2);
    }
}
