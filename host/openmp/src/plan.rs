//! Computing each thread's OS proc set, and the runtime's verbose report.

use std::collections::HashMap;

use wloc_core::{CpuSet, Topology};

use crate::error::{PlaceError, Setting};
use crate::kmp::{AffinityType, Granularity, KmpAffinity};
use crate::machine::{HwThread, HwType, Machine, Method, Resolved};
use crate::places::{PlacesSpec, ProcBind};

/// Most threads a placement is computed for.
pub const MAX_THREADS: usize = 1 << 20;

/// What decides the placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// A `KMP_AFFINITY` setting (`GOMP_CPU_AFFINITY` is one too, see [`KmpAffinity::from_gomp`]).
    Kmp(KmpAffinity),
    /// `OMP_PLACES` with `OMP_PROC_BIND`.
    Places {
        /// The places.
        places: PlacesSpec,
        /// The policy over them.
        bind: ProcBind,
    },
}

/// The result: one OS proc set per thread, and the messages a runtime would print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The OS procs each thread may run on, thread 0 first.
    pub threads: Vec<CpuSet>,
    /// Whether threads are bound (false for `none`, `disabled` and `OMP_PROC_BIND=false`).
    pub bound: bool,
    /// The verbose report (`OMP: Info #...` lines), empty unless asked for.
    pub report: Vec<String>,
    /// Warnings (ignored modifiers, invalid OS procs, granularity fallbacks).
    pub warnings: Vec<String>,
}

/// The runtime's mask format: ranges of three or more as `a-b`, others listed.
pub fn mask_string(set: &CpuSet) -> String {
    if set.is_infinite() {
        // Only a finite part can be listed; the tail is open-ended.
        return set.to_list_string();
    }
    let ids: Vec<u32> = set.iter().collect();
    if ids.is_empty() {
        return "{<empty>}".to_string();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}-{}", ids[i], ids[j]));
        } else {
            for id in &ids[i..=j] {
                parts.push(id.to_string());
            }
        }
        i = j + 1;
    }
    parts.join(",")
}

fn info(n: u32, env: &str, text: &str) -> String {
    format!("OMP: Info #{n}: {env}: {text}")
}

/// The report up to the map: mask, method, counts, uniformity, levels, map.
fn report_map(
    m: &Machine,
    env: &str,
    respect: bool,
    initial: &CpuSet,
    all: &CpuSet,
) -> Vec<String> {
    let mut r = Vec::new();
    if respect {
        r.push(info(
            155,
            env,
            &format!(
                "Initial OS proc set respected: {}",
                mask_string(&(initial & all))
            ),
        ));
    } else {
        r.push(info(
            156,
            env,
            &format!("Initial OS proc set not respected: {}", mask_string(all)),
        ));
    }
    r.push(match m.method() {
        Method::Hwloc => info(263, env, "affinity capable, using hwloc."),
        Method::Cpuid => info(216, env, "decoding x2APIC ids."),
        Method::Cpuinfo => info(149, env, "affinity capable, using cpuinfo file"),
        Method::Flat => info(
            151,
            env,
            "affinity capable, using default \"flat\" topology",
        ),
    });
    r.push(info(
        157,
        env,
        &format!("{} available OS procs", m.threads().len()),
    ));
    r.push(if m.is_uniform() {
        info(158, env, "Uniform topology")
    } else {
        info(159, env, "Nonuniform topology")
    });
    if m.is_hybrid() {
        let core_level = m.types().iter().position(|&t| t == HwType::Core);
        let mut by_type: Vec<(Option<crate::machine::CoreType>, Option<i32>, u64)> = m
            .threads()
            .iter()
            .map(|t| {
                (
                    t.core_type,
                    t.efficiency,
                    core_level.map_or(t.os_id as u64, |l| m.key_at(t, Resolved::Level(l))),
                )
            })
            .collect();
        by_type.sort();
        by_type.dedup();
        let mut types: Vec<(crate::machine::CoreType, usize)> = Vec::new();
        for (ct, _, _) in &by_type {
            if let Some(ct) = ct {
                match types.iter_mut().find(|x| x.0 == *ct) {
                    Some(x) => x.1 += 1,
                    None => types.push((*ct, 1)),
                }
            }
        }
        for (ct, n) in types {
            r.push(info(
                193,
                env,
                &format!("hybrid core type detected: {n} {} cores.", ct.name()),
            ));
        }
        let mut effs: Vec<(i32, usize)> = Vec::new();
        for (_, e, _) in &by_type {
            if let Some(e) = e {
                match effs.iter_mut().find(|x| x.0 == *e) {
                    Some(x) => x.1 += 1,
                    None => effs.push((*e, 1)),
                }
            }
        }
        effs.sort();
        for (e, n) in effs {
            r.push(info(194, env, &format!("  {n} with core efficiency {e}.")));
        }
    }
    r.push(info(191, env, &m.topology_line()));
    r.push(info(218, env, "OS proc to physical thread map:"));
    for t in m.threads() {
        r.push(info(
            172,
            env,
            &format!("OS proc {} maps to {}", t.os_id, m.location(t)),
        ));
    }
    r
}

fn report_bindings(env: &str, threads: &[CpuSet]) -> Vec<String> {
    threads
        .iter()
        .enumerate()
        .map(|(i, s)| {
            info(
                254,
                env,
                &format!("thread {i} bound to OS proc set {}", mask_string(s)),
            )
        })
        .collect()
}

/// The granule of each proc: how far a thread bound to it may float.
struct Granules {
    /// Granule key of each map thread, in map order.
    keys: Vec<u64>,
    /// Procs of each granule.
    sets: HashMap<u64, CpuSet>,
}

fn granules(m: &Machine, gran: Granularity, warnings: &mut Vec<String>) -> (Granules, bool) {
    let thread_level = Resolved::Level(m.types().len() - 1);
    let mut fine = false;
    let mut level = |t: HwType, warnings: &mut Vec<String>| {
        let (r, used) = m.resolve_or_finer(t);
        if let Some(u) = used {
            warnings.push(format!(
                "KMP_AFFINITY: granularity setting: {} does not exist in topology.  Using granularity={} instead.",
                t.keyword(),
                u.keyword()
            ));
        }
        fine = r == thread_level;
        r
    };
    let key: Box<dyn Fn(&HwThread) -> u64> = match gran {
        Granularity::CoreType | Granularity::CoreEfficiency if !m.is_hybrid() => {
            warnings.push(format!(
                "KMP_AFFINITY: granularity={} is only available on hybrid machines.  Using granularity=core instead.",
                gran.name()
            ));
            let r = level(HwType::Core, warnings);
            Box::new(move |t| m.key_at(t, r))
        }
        Granularity::CoreType => Box::new(|t| t.core_type.map_or(u64::MAX, |c| c as u64)),
        Granularity::CoreEfficiency => {
            Box::new(|t| t.efficiency.map_or(u64::MAX, |e| e as u32 as u64))
        }
        Granularity::Level(t) => {
            let r = level(t, warnings);
            Box::new(move |th| m.key_at(th, r))
        }
    };
    let keys: Vec<u64> = m.threads().iter().map(&key).collect();
    let mut sets: HashMap<u64, CpuSet> = HashMap::new();
    for (t, k) in m.threads().iter().zip(&keys) {
        sets.entry(*k).or_default().set(t.os_id);
    }
    (Granules { keys, sets }, fine)
}

fn kmp_threads(
    m: &Machine,
    a: &KmpAffinity,
    nthreads: usize,
    warnings: &mut Vec<String>,
) -> Result<Vec<CpuSet>, PlaceError> {
    let gran = a.granularity.unwrap_or(Granularity::Level(HwType::Core));
    let (g, fine) = granules(m, gran, warnings);
    let depth = m.types().len();
    let n = m.threads().len();
    match a.kind {
        AffinityType::Explicit => {
            let index: HashMap<u32, usize> = m
                .threads()
                .iter()
                .enumerate()
                .map(|(i, t)| (t.os_id, i))
                .collect();
            let mut masks = Vec::new();
            for entry in a.proclist.as_deref().unwrap_or(&[]) {
                let mut mask = CpuSet::new();
                for id in entry {
                    match index.get(id) {
                        Some(&i) => mask |= &g.sets[&g.keys[i]],
                        None => warnings
                            .push(format!("KMP_AFFINITY: Ignoring invalid OS proc ID {id}.")),
                    }
                }
                if !mask.is_empty() {
                    masks.push(mask);
                }
            }
            if masks.is_empty() {
                return Err(PlaceError::NoValidProcIds(Setting::KmpAffinity));
            }
            Ok((0..nthreads)
                .map(|i| masks[i % masks.len()].clone())
                .collect())
        }
        AffinityType::Balanced => Ok(balanced(m, &g, fine, nthreads)),
        _ => {
            let (k, offset) = match a.kind {
                AffinityType::Compact => ((a.permute as usize).min(depth), a.offset),
                AffinityType::Scatter => {
                    let p = a.permute as usize;
                    (if p >= depth { 0 } else { depth - 1 - p }, a.offset)
                }
                AffinityType::Logical => (0, a.offset),
                // Threads on consecutive cores: compact,1 when cores have several threads.
                _ => {
                    let smt = m.ratios().last().copied().unwrap_or(1) > 1;
                    (usize::from(smt), a.offset)
                }
            };
            let mut order: Vec<usize> = (0..n).collect();
            let sort_key = |i: usize| -> Vec<u32> {
                let c = &m.threads()[i].child_nums;
                (0..k)
                    .map(|j| c[depth - 1 - j])
                    .chain((k..depth).map(|j| c[j - k]))
                    .collect()
            };
            let keys: Vec<Vec<u32>> = (0..n).map(sort_key).collect();
            order.sort_by(|&x, &y| keys[x].cmp(&keys[y]));
            let masks: Vec<&CpuSet> = if a.duplicates {
                order.iter().map(|&i| &g.sets[&g.keys[i]]).collect()
            } else {
                // One mask per granule, taken at its first proc in map order.
                let mut leader: HashMap<u64, usize> = HashMap::new();
                for (i, k) in g.keys.iter().enumerate() {
                    leader.entry(*k).or_insert(i);
                }
                order
                    .iter()
                    .filter(|&&i| leader[&g.keys[i]] == i)
                    .map(|&i| &g.sets[&g.keys[i]])
                    .collect()
            };
            let len = masks.len();
            Ok((0..nthreads)
                .map(|i| masks[(i + offset as usize % len) % len].clone())
                .collect())
        }
    }
}

/// `balanced`: threads spread over the cores (or over the packages when
/// cores have a single thread), with neighbouring thread numbers sharing a
/// core once cores must be shared.
fn balanced(m: &Machine, g: &Granules, fine: bool, nthreads: usize) -> Vec<CpuSet> {
    let depth = m.types().len();
    let core_level = m
        .types()
        .iter()
        .position(|&t| t == HwType::Core)
        .unwrap_or(depth - 1);
    let single_thread_cores = m.ratios().last().copied().unwrap_or(1) <= 1;
    let unit_level = if single_thread_cores && m.counts()[0] > 1 {
        0
    } else {
        core_level
    };
    // Units in map order, each with its procs in map order.
    let mut units: Vec<Vec<u32>> = Vec::new();
    let mut last: Option<u64> = None;
    for t in m.threads() {
        let k = m.key_at(t, Resolved::Level(unit_level));
        if last != Some(k) {
            units.push(Vec::new());
            last = Some(k);
        }
        if let Some(u) = units.last_mut() {
            u.push(t.os_id);
        }
    }
    let index: HashMap<u32, usize> = m
        .threads()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.os_id, i))
        .collect();
    let ncores = units.len();
    let chunk = nthreads / ncores;
    let big_cores = nthreads % ncores;
    let big_nth = (chunk + 1) * big_cores;
    (0..nthreads)
        .map(|tid| {
            let (core, local) = if tid < big_nth {
                (tid / (chunk + 1), tid % (chunk + 1))
            } else {
                ((tid - big_cores) / chunk, (tid - big_cores) % chunk)
            };
            let unit = &units[core];
            if fine {
                CpuSet::from_index(unit[local % unit.len()])
            } else if unit_level == core_level {
                let first = unit[0];
                g.sets[&g.keys[index[&first]]].clone()
            } else {
                unit.iter().copied().collect()
            }
        })
        .collect()
}

/// The place of each thread for `OMP_PROC_BIND` close, spread or primary,
/// the primary thread starting on the first place.
pub fn bind_places(bind: ProcBind, nplaces: usize, nthreads: usize) -> Vec<usize> {
    let p = nplaces;
    match bind {
        ProcBind::Primary => vec![0; nthreads],
        ProcBind::Spread if nthreads <= p => {
            // Partitions of s places, one more for every gap-th thread while places remain.
            let s = p / nthreads;
            let mut rem = p - nthreads * s;
            let gap = nthreads.checked_div(rem).unwrap_or(1);
            let mut gap_ct = gap;
            let mut place = 0;
            let mut out = Vec::with_capacity(nthreads);
            for _ in 0..nthreads {
                out.push(place);
                place += s - 1;
                if rem > 0 && gap_ct == gap {
                    place += 1;
                    rem -= 1;
                    gap_ct = 0;
                }
                gap_ct += 1;
                place = (place + 1) % p;
            }
            out
        }
        _ if nthreads <= p => (0..nthreads).collect(),
        _ => {
            // More threads than places: s per place, one more on every gap-th place while threads remain.
            let s = nthreads / p;
            let mut rem = nthreads - s * p;
            let gap = p.checked_div(rem).unwrap_or(p);
            let (mut place, mut count, mut gap_ct) = (0usize, 0usize, gap);
            let mut out = Vec::with_capacity(nthreads);
            for _ in 0..nthreads {
                out.push(place);
                count += 1;
                if count == s && rem > 0 && gap_ct == gap {
                    // This place takes one more thread.
                } else if count == s + 1 && rem > 0 && gap_ct == gap {
                    place = (place + 1) % p;
                    count = 0;
                    gap_ct = 1;
                    rem -= 1;
                } else if count == s {
                    place = (place + 1) % p;
                    gap_ct += 1;
                    count = 0;
                }
            }
            out
        }
    }
}

/// Computes the placement of `nthreads` threads (default: one per
/// available proc) on `topo`, modelled with `method`.  `initial` is the
/// initial affinity mask: the available procs are the topology's PUs in it,
/// unless `norespect`.  `verbose` forces the report that the `verbose`
/// modifier asks for.
pub fn place(
    topo: &Topology,
    method: Method,
    initial: &CpuSet,
    policy: &Policy,
    nthreads: Option<usize>,
    verbose: bool,
) -> Result<Placement, PlaceError> {
    let all = topo.cpuset().clone();
    let (respect, env) = match policy {
        Policy::Kmp(a) => (a.respect, "KMP_AFFINITY"),
        Policy::Places { .. } => (true, "OMP_PLACES"),
    };
    let available = if respect { &all & initial } else { all.clone() };
    if available.is_empty() {
        return Err(PlaceError::NoAvailableProcs);
    }
    let mut warnings = match policy {
        Policy::Kmp(a) => a.warnings_text.clone(),
        _ => Vec::new(),
    };
    if let Policy::Kmp(a) = policy
        && a.kind == AffinityType::Disabled
    {
        let n = nthreads.unwrap_or(available.weight().unwrap_or(1) as usize);
        check_threads(n)?;
        return Ok(Placement {
            threads: vec![initial & &all; n],
            bound: false,
            report: Vec::new(),
            warnings,
        });
    }
    let m = Machine::new(topo, method, &available);
    let n = nthreads.unwrap_or(m.threads().len());
    check_threads(n)?;
    let verbose = verbose || matches!(policy, Policy::Kmp(a) if a.verbose);
    let mut report = if verbose {
        report_map(&m, env, respect, initial, &all)
    } else {
        Vec::new()
    };
    let (threads, bound) = match policy {
        Policy::Kmp(a) if a.kind == AffinityType::None => (vec![m.available().clone(); n], false),
        Policy::Kmp(a) => (kmp_threads(&m, a, n, &mut warnings)?, true),
        Policy::Places { places, bind } => {
            let list: Vec<CpuSet> =
                match places {
                    PlacesSpec::Abstract { level, count } => {
                        let mut g = m.groups(*level);
                        if let Some(c) = count {
                            g.truncate(*c);
                        }
                        g
                    }
                    PlacesSpec::Explicit(list) => {
                        list.iter()
                            .filter_map(|pl| {
                                let set: CpuSet = pl
                                    .iter()
                                    .copied()
                                    .filter(|id| m.available().is_set(*id))
                                    .collect();
                                if set.is_empty() {
                                    warnings.push(format!(
                                "OMP_PLACES: place {{{}}} holds no available OS proc, ignored.",
                                pl.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
                            ));
                                    None
                                } else {
                                    Some(set)
                                }
                            })
                            .collect()
                    }
                };
            if list.is_empty() {
                return Err(PlaceError::NoPlaces);
            }
            if *bind == ProcBind::False {
                (vec![m.available().clone(); n], false)
            } else {
                let idx = bind_places(*bind, list.len(), n);
                (idx.into_iter().map(|i| list[i].clone()).collect(), true)
            }
        }
    };
    if verbose && bound {
        report.extend(report_bindings(env, &threads));
    }
    Ok(Placement {
        threads,
        bound,
        report,
        warnings,
    })
}

fn check_threads(n: usize) -> Result<(), PlaceError> {
    if n == 0 || n > MAX_THREADS {
        return Err(PlaceError::NoThreads);
    }
    Ok(())
}

/// One place in `OMP_PLACES` syntax: `{0,4}`, or `{0:4}` for runs of three or more.
fn place_string(set: &CpuSet) -> String {
    let ids: Vec<u32> = set.iter().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}:{}", ids[i], j - i + 1));
        } else {
            parts.extend(ids[i..=j].iter().map(|v| v.to_string()));
        }
        i = j + 1;
    }
    format!("{{{}}}", parts.join(","))
}

impl Placement {
    /// The environment that makes any OpenMP runtime follow this
    /// placement: `(name, Some(value))` to set and `(name, None)` to remove.
    /// Bound threads get one explicit place each in `OMP_PLACES` with
    /// `OMP_PROC_BIND=true` and `OMP_NUM_THREADS`, plus
    /// `GOMP_CPU_AFFINITY` when every place is a single proc;
    /// `KMP_AFFINITY` is removed so that it cannot override them.
    pub fn environment(&self) -> Vec<(&'static str, Option<String>)> {
        let n = self.threads.len().to_string();
        if !self.bound {
            return vec![
                ("KMP_AFFINITY", None),
                ("GOMP_CPU_AFFINITY", None),
                ("OMP_PLACES", None),
                ("OMP_PROC_BIND", Some("false".into())),
                ("OMP_NUM_THREADS", Some(n)),
            ];
        }
        let places: Vec<String> = self.threads.iter().map(place_string).collect();
        let singles: Option<Vec<String>> = self
            .threads
            .iter()
            .map(|s| {
                (s.weight() == Some(1))
                    .then(|| s.first().map(|v| v.to_string()))
                    .flatten()
            })
            .collect();
        vec![
            ("KMP_AFFINITY", None),
            ("GOMP_CPU_AFFINITY", singles.map(|v| v.join(","))),
            ("OMP_PLACES", Some(places.join(","))),
            ("OMP_PROC_BIND", Some("true".into())),
            ("OMP_NUM_THREADS", Some(n)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::places::parse_places;

    fn synth(desc: &str) -> Topology {
        wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap()
    }

    fn kmp(topo: &Topology, s: &str, n: Option<usize>) -> Vec<String> {
        let p = place(
            topo,
            Method::Hwloc,
            &CpuSet::full(),
            &Policy::Kmp(KmpAffinity::parse(s).unwrap()),
            n,
            false,
        )
        .unwrap();
        p.threads.iter().map(|s| s.to_list_string()).collect()
    }

    const SEED: &str = "pack:2(indexes=0,3) core:2 pu:2(indexes=0,4,2,6,1,5,3,7)";

    #[test]
    fn mask_strings() {
        assert_eq!(mask_string(&CpuSet::parse_list("0-3").unwrap()), "0-3");
        assert_eq!(mask_string(&CpuSet::parse_list("0,1,4").unwrap()), "0,1,4");
        assert_eq!(
            mask_string(&CpuSet::parse_list("1-2,5-9,11").unwrap()),
            "1,2,5-9,11"
        );
        assert_eq!(mask_string(&CpuSet::new()), "{<empty>}");
        assert_eq!(
            place_string(&CpuSet::parse_list("0-3,8,9").unwrap()),
            "{0:4,8,9}"
        );
    }

    #[test]
    fn compact_scatter_permute_offset() {
        let t = synth(SEED);
        assert_eq!(
            kmp(&t, "granularity=fine,compact", None),
            ["0", "4", "2", "6", "1", "5", "3", "7"]
        );
        assert_eq!(
            kmp(&t, "granularity=fine,scatter", None),
            ["0", "1", "2", "3", "4", "5", "6", "7"]
        );
        assert_eq!(
            kmp(&t, "granularity=fine,compact,0,5", None),
            ["5", "3", "7", "0", "4", "2", "6", "1"]
        );
        assert_eq!(
            kmp(&t, "granularity=fine,compact,1,0", None),
            ["0", "2", "1", "3", "4", "6", "5", "7"]
        );
        assert_eq!(kmp(&t, "granularity=core,compact", Some(2)), ["0,4", "0,4"]);
        assert_eq!(
            kmp(&t, "granularity=socket,scatter", Some(3)),
            ["0,2,4,6", "1,3,5,7", "0,2,4,6"]
        );
        assert_eq!(
            kmp(&t, "granularity=fine,compact,9", None),
            kmp(&t, "granularity=fine,compact,3", None)
        );
        assert_eq!(
            kmp(&t, "granularity=fine,scatter,9", None),
            kmp(&t, "granularity=fine,compact", None)
        );
        // logical,n == compact,0,n; physical,n == compact,1,n with hyper-threading.
        assert_eq!(
            kmp(&t, "granularity=fine,logical,3", None),
            kmp(&t, "granularity=fine,compact,0,3", None)
        );
        assert_eq!(
            kmp(&t, "granularity=fine,physical,3", None),
            kmp(&t, "granularity=fine,compact,1,3", None)
        );
        let nosmt = synth("pack:2 core:2 pu:1");
        assert_eq!(
            kmp(&nosmt, "physical,1", None),
            kmp(&nosmt, "logical,1", None)
        );
        // noduplicates: one mask per core.
        assert_eq!(
            kmp(&t, "noduplicates,compact", Some(5)),
            ["0,4", "2,6", "1,5", "3,7", "0,4"]
        );
    }

    #[test]
    fn balanced_spreads_then_packs_neighbours() {
        let t = synth("pack:1 core:4 pu:2");
        assert_eq!(
            kmp(&t, "granularity=fine,balanced", Some(4)),
            ["0", "2", "4", "6"]
        );
        assert_eq!(
            kmp(&t, "granularity=fine,balanced", Some(6)),
            ["0", "1", "2", "3", "4", "6"]
        );
        assert_eq!(kmp(&t, "balanced", Some(2)), ["0-1", "2-3"]);
        let t = synth("pack:2 core:2 pu:1");
        assert_eq!(kmp(&t, "balanced", Some(2)), ["0-1", "2-3"]);
    }

    #[test]
    fn explicit_and_invalid_ids() {
        let t = synth(SEED);
        let a = KmpAffinity::parse("proclist=[3,99,{1,2}],explicit").unwrap();
        let p = place(
            &t,
            Method::Hwloc,
            &CpuSet::full(),
            &Policy::Kmp(a),
            Some(4),
            false,
        )
        .unwrap();
        let got: Vec<String> = p.threads.iter().map(|s| s.to_list_string()).collect();
        // Default granularity core: each proc floats over its core.
        assert_eq!(got, ["3,7", "1-2,5-6", "3,7", "1-2,5-6"]);
        assert!(p.warnings.iter().any(|w| w.contains("99")));
        let a = KmpAffinity::parse("proclist=[99],explicit").unwrap();
        assert_eq!(
            place(
                &t,
                Method::Hwloc,
                &CpuSet::full(),
                &Policy::Kmp(a),
                None,
                false
            )
            .unwrap_err(),
            PlaceError::NoValidProcIds(Setting::KmpAffinity)
        );
    }

    #[test]
    fn respect_restricts() {
        let t = synth(SEED);
        let initial: CpuSet = CpuSet::parse_list("4-7").unwrap();
        let a = KmpAffinity::parse("compact").unwrap();
        let p = place(&t, Method::Hwloc, &initial, &Policy::Kmp(a), Some(8), false).unwrap();
        let got: Vec<String> = p.threads.iter().map(|s| s.to_list_string()).collect();
        assert_eq!(got, ["4", "6", "5", "7", "4", "6", "5", "7"]);
        let a = KmpAffinity::parse("norespect,granularity=fine,compact").unwrap();
        let p = place(&t, Method::Hwloc, &initial, &Policy::Kmp(a), None, false).unwrap();
        assert_eq!(p.threads.len(), 8);
        let a = KmpAffinity::parse("compact").unwrap();
        assert_eq!(
            place(
                &t,
                Method::Hwloc,
                &CpuSet::parse_list("100").unwrap(),
                &Policy::Kmp(a),
                None,
                false
            )
            .unwrap_err(),
            PlaceError::NoAvailableProcs
        );
    }

    #[test]
    fn none_and_disabled_do_not_bind() {
        let t = synth(SEED);
        for s in ["none", "disabled"] {
            let a = KmpAffinity::parse(s).unwrap();
            let p = place(
                &t,
                Method::Hwloc,
                &CpuSet::full(),
                &Policy::Kmp(a),
                Some(3),
                true,
            )
            .unwrap();
            assert!(!p.bound);
            assert_eq!(p.threads, vec![CpuSet::parse_list("0-7").unwrap(); 3]);
            assert!(!p.report.iter().any(|l| l.contains("bound to")));
        }
    }

    #[test]
    fn proc_bind_distributions() {
        assert_eq!(bind_places(ProcBind::Close, 4, 2), [0, 1]);
        assert_eq!(bind_places(ProcBind::Close, 4, 6), [0, 0, 1, 2, 2, 3]);
        assert_eq!(bind_places(ProcBind::Spread, 8, 2), [0, 4]);
        assert_eq!(bind_places(ProcBind::Spread, 8, 3), [0, 3, 6]);
        assert_eq!(bind_places(ProcBind::Spread, 4, 4), [0, 1, 2, 3]);
        assert_eq!(bind_places(ProcBind::Spread, 2, 4), [0, 0, 1, 1]);
        assert_eq!(bind_places(ProcBind::Primary, 4, 3), [0, 0, 0]);
        assert_eq!(bind_places(ProcBind::True, 4, 5), [0, 0, 1, 2, 3]);
    }

    #[test]
    fn places_policies() {
        let t = synth("pack:2 core:4 pu:2");
        let run = |places: &str, bind: ProcBind, n: usize| -> Vec<String> {
            let pol = Policy::Places {
                places: parse_places(places).unwrap(),
                bind,
            };
            place(&t, Method::Hwloc, &CpuSet::full(), &pol, Some(n), false)
                .unwrap()
                .threads
                .iter()
                .map(|s| s.to_list_string())
                .collect()
        };
        assert_eq!(run("cores", ProcBind::Spread, 2), ["0-1", "8-9"]);
        assert_eq!(run("cores", ProcBind::Close, 3), ["0-1", "2-3", "4-5"]);
        assert_eq!(run("sockets", ProcBind::Close, 3), ["0-7", "0-7", "8-15"]);
        assert_eq!(run("threads(2)", ProcBind::Close, 3), ["0", "0", "1"]);
        assert_eq!(run("{0:4}:4:4", ProcBind::Spread, 2), ["0-3", "8-11"]);
        assert_eq!(run("{1},{99}", ProcBind::Primary, 2), ["1", "1"]);
        assert_eq!(run("cores", ProcBind::False, 1), ["0-15"]);
        let pol = Policy::Places {
            places: parse_places("{99}").unwrap(),
            bind: ProcBind::Close,
        };
        assert_eq!(
            place(&t, Method::Hwloc, &CpuSet::full(), &pol, None, false).unwrap_err(),
            PlaceError::NoPlaces
        );
    }

    #[test]
    fn environment_export() {
        let t = synth(SEED);
        let a = KmpAffinity::parse("granularity=fine,compact").unwrap();
        let p = place(
            &t,
            Method::Hwloc,
            &CpuSet::full(),
            &Policy::Kmp(a),
            Some(3),
            false,
        )
        .unwrap();
        let env = p.environment();
        assert!(env.contains(&("OMP_PLACES", Some("{0},{4},{2}".into()))));
        assert!(env.contains(&("GOMP_CPU_AFFINITY", Some("0,4,2".into()))));
        assert!(env.contains(&("OMP_PROC_BIND", Some("true".into()))));
        assert!(env.contains(&("KMP_AFFINITY", None)));
        let a = KmpAffinity::parse("compact").unwrap();
        let p = place(
            &t,
            Method::Hwloc,
            &CpuSet::full(),
            &Policy::Kmp(a),
            Some(2),
            false,
        )
        .unwrap();
        let env = p.environment();
        assert!(env.contains(&("OMP_PLACES", Some("{0,4},{0,4}".into()))));
        assert!(env.contains(&("GOMP_CPU_AFFINITY", None)));
    }
}
