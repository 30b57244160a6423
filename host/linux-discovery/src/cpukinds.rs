//! CPU kinds: cpufreq base and maximal frequencies, `cpu_capacity`, Intel
//! hybrid PMU sets (`/sys/devices/cpu_core|cpu_atom/cpus`) and ARM MIDR
//! registers.

use wloc_core::cpukinds::CpuKind;
use wloc_core::object::Info;
use wloc_core::{CpuSet, ObjId, ObjType};

use crate::ctx::{Arch, Ctx};
use crate::parse;

const CPU: &str = "/sys/devices/system/cpu";

#[derive(Clone, Default)]
struct PuInfo {
    pu: u32,
    max_freq: u64,
    base_freq: u64,
    capacity: u64,
    midr: u64,
}

fn info(name: &str, value: &str) -> Info {
    Info {
        name: name.into(),
        value: value.into(),
    }
}

/// Groups PUs by value, in increasing value order.
fn sets_by_value(values: impl Iterator<Item = (u32, u64)>) -> Vec<(u64, CpuSet)> {
    let mut out: Vec<(u64, CpuSet)> = Vec::new();
    for (pu, v) in values {
        match out.iter_mut().find(|(x, _)| *x == v) {
            Some((_, s)) => s.set(pu),
            None => out.push((v, CpuSet::from_index(pu))),
        }
    }
    out.sort_by_key(|(v, _)| *v);
    out
}

fn midr_arch(v: u64) -> &'static str {
    match v {
        1 => "4",
        2 => "4T",
        3 => "5",
        4 => "5T",
        5 => "5TE",
        6 => "5TEJ",
        7 => "6",
        15 => "8",
        _ => "unknown",
    }
}

impl Ctx<'_> {
    /// Adds a kind as hwloc does: existing kinds the new PUs partly cover
    /// are split (the covered part, with both kinds' infos, goes last),
    /// kinds fully covered get the new infos, and uncovered PUs make a new
    /// kind at the end.
    pub(crate) fn register_cpukind(
        &mut self,
        set: CpuSet,
        efficiency: Option<i32>,
        infos: Vec<Info>,
    ) {
        fn add_infos(dst: &mut Vec<Info>, src: &[Info]) {
            for i in src {
                if !dst.iter().any(|d| d.name == i.name && d.value == i.value) {
                    dst.push(i.clone());
                }
            }
        }
        let mut remaining = set;
        if remaining.is_empty() {
            return;
        }
        let kinds = &mut self.topo.cpukinds;
        let oldnr = kinds.len();
        for i in 0..oldnr {
            let inter = &kinds[i].cpuset & &remaining;
            if inter.is_empty() {
                continue;
            }
            if inter == kinds[i].cpuset {
                // The new kind covers this one.
                add_infos(&mut kinds[i].infos, &infos);
                if kinds[i].forced_efficiency.is_none() {
                    kinds[i].forced_efficiency = efficiency;
                }
            } else {
                let mut split_infos = Vec::new();
                add_infos(&mut split_infos, &kinds[i].infos);
                add_infos(&mut split_infos, &infos);
                kinds[i].cpuset = &kinds[i].cpuset - &inter;
                kinds.push(CpuKind::new(inter.clone(), efficiency, split_infos));
            }
            remaining = &remaining - &inter;
            if remaining.is_empty() {
                break;
            }
        }
        if !remaining.is_empty() {
            let mut own = Vec::new();
            add_infos(&mut own, &infos);
            kinds.push(CpuKind::new(remaining, efficiency, own));
        }
    }

    fn register_sets(&mut self, sets: Vec<(u64, CpuSet)>, name: &str, forced: bool) {
        if !sets.is_empty() {
            self.support.push("discovery.cpukind_efficiency");
        }
        // hwloc 3.0 uses the values as efficiencies unless one does not
        // fit (hwloc 2 always ranks them: wloc's C library does that).
        let use_index = sets.iter().any(|(v, _)| *v > i32::MAX as u64);
        for (i, (v, set)) in sets.into_iter().enumerate() {
            let eff = if forced {
                Some(if use_index { i as i32 } else { v as i32 })
            } else {
                None
            };
            self.register_cpukind(set, eff, vec![info(name, &v.to_string())]);
        }
    }

    fn pu_list(&self) -> Vec<u32> {
        self.topo
            .obj(self.topo.root())
            .cpuset
            .as_ref()
            .map(|c| c.iter().take(1 << 16).collect())
            .unwrap_or_default()
    }

    pub(crate) fn look_cpukinds(&mut self) {
        if self.cpukinds_use_midr {
            self.cpukinds_by_midr();
            return;
        }
        self.cpukinds_by_freq();
        if self.arch == Arch::X86 {
            for (dir, kind) in [
                ("cpu_atom", "IntelAtom"),
                ("cpu_core", "IntelCore"),
                ("cpu_lowpower", "IntelLowPower"),
            ] {
                if let Some(set) = self.read_cpulist(&format!("/sys/devices/{dir}/cpus")) {
                    self.register_cpukind(set, None, vec![info("CoreType", kind)]);
                }
            }
        }
    }

    fn cpukinds_by_freq(&mut self) {
        let pus = self.pu_list();
        if pus.is_empty() {
            return;
        }
        // Skip files the kernel does not have: no cpufreq subsystem (nor
        // CPPC) for the first PU or globally, no capacity for the first PU.
        let first = self.fs.list(&format!("{CPU}/cpu{}", pus[0]));
        let has = |n: &str| first.as_ref().is_none_or(|e| e.iter().any(|x| x == n));
        let freqs = has("cpufreq") || has("acpi_cppc") || self.fs.exists(&format!("{CPU}/cpufreq"));
        let capacity = has("cpu_capacity");
        let mut paths = Vec::with_capacity(pus.len() * 3);
        let mut res: Vec<Option<Vec<u8>>> = Vec::with_capacity(pus.len() * 3);
        for pu in &pus {
            for (wanted, file) in [
                (freqs, "cpufreq/cpuinfo_max_freq"),
                (freqs, "cpufreq/base_frequency"),
                (capacity, "cpu_capacity"),
            ] {
                if wanted {
                    paths.push(format!("{CPU}/cpu{pu}/{file}"));
                }
            }
        }
        let mut read = self.read_batch(&paths).into_iter();
        for _ in &pus {
            for wanted in [freqs, freqs, capacity] {
                res.push(if wanted { read.next().flatten() } else { None });
            }
        }

        let val = |b: &Option<Vec<u8>>| -> Option<u64> {
            b.as_ref()
                .filter(|b| !b.is_empty())
                .map(|b| parse::as_uint(b) as u64)
        };
        // ACPI CPPC nominal frequencies only matter without cpufreq base
        // frequencies; read them lazily, as long as they are used.
        let mut nominal: Vec<Option<u64>> = vec![None; pus.len()];
        let mut nominal_read = 0usize;
        let mut use_cppc = if freqs { self.cpukinds_use_cppc } else { 0 };
        let mut max_without_base = false;
        let mut by_pu: Vec<PuInfo> = Vec::with_capacity(pus.len());
        for (i, &pu) in pus.iter().enumerate() {
            let mut p = PuInfo {
                pu,
                ..Default::default()
            };
            if let Some(v) = val(&res[3 * i]) {
                p.max_freq = v;
            }
            let mut base = 0;
            if use_cppc != 1
                && let Some(v) = val(&res[3 * i + 1])
            {
                base = v;
                p.base_freq = v;
                use_cppc = 0;
            }
            if use_cppc != 0 {
                if i >= nominal_read {
                    // While trying, one file; once CPPC is in use, the rest
                    // in one batch (they are used until one fails).
                    let end = if use_cppc == 1 { pus.len() } else { i + 1 };
                    let paths: Vec<String> = pus[i..end]
                        .iter()
                        .map(|pu| format!("{CPU}/cpu{pu}/acpi_cppc/nominal_freq"))
                        .collect();
                    for (k, b) in self.read_batch(&paths).iter().enumerate() {
                        nominal[i + k] = val(b);
                    }
                    nominal_read = end;
                }
                match nominal[i] {
                    Some(v) if v > 0 => {
                        base = v;
                        p.base_freq = v * 1000;
                        use_cppc = 1;
                    }
                    _ => use_cppc = 0,
                }
            }
            if p.max_freq != 0 && base == 0 {
                max_without_base = true;
            }
            if let Some(v) = val(&res[3 * i + 2]) {
                p.capacity = v;
            }
            by_pu.push(p);
        }
        if self.cpukinds_maxfreq_enabled == -1 && !max_without_base {
            adjust_maxfreqs(&mut by_pu, self.cpukinds_maxfreq_adjust);
        }
        let max_sets = sets_by_value(
            by_pu
                .iter()
                .filter(|p| p.max_freq != 0)
                .map(|p| (p.pu, p.max_freq / 1000)),
        );
        let base_sets = sets_by_value(
            by_pu
                .iter()
                .filter(|p| p.base_freq != 0)
                .map(|p| (p.pu, p.base_freq / 1000)),
        );
        if self.cpukinds_maxfreq_enabled != 0 {
            self.register_sets(max_sets, "FrequencyMaxMHz", false);
        }
        self.register_sets(base_sets, "FrequencyBaseMHz", false);
        let cap_sets = sets_by_value(
            by_pu
                .iter()
                .filter(|p| p.capacity != 0)
                .map(|p| (p.pu, p.capacity)),
        );
        self.register_sets(cap_sets, "LinuxCapacity", true);
    }

    fn cpukinds_by_midr(&mut self) {
        let pus = self.pu_list();
        if pus.is_empty() {
            return;
        }
        let mut paths = Vec::with_capacity(pus.len() * 2);
        for pu in &pus {
            paths.push(format!("{CPU}/cpu{pu}/regs/identification/midr_el1"));
            paths.push(format!("{CPU}/cpu{pu}/cpu_capacity"));
        }
        let res = self.read_batch(&paths);
        let by_pu: Vec<PuInfo> = pus
            .iter()
            .enumerate()
            .map(|(i, &pu)| PuInfo {
                pu,
                midr: res[2 * i]
                    .as_ref()
                    .filter(|b| !b.is_empty())
                    .map(|b| parse::as_u64(b))
                    .unwrap_or(0),
                capacity: res[2 * i + 1]
                    .as_ref()
                    .filter(|b| !b.is_empty())
                    .map(|b| parse::as_uint(b) as u64)
                    .unwrap_or(0),
                ..Default::default()
            })
            .collect();
        let mut kinds: Vec<(u64, CpuSet)> = Vec::new();
        for p in by_pu.iter().filter(|p| p.midr != 0) {
            match kinds.iter_mut().find(|(v, _)| *v == p.midr) {
                Some((_, s)) => s.set(p.pu),
                None => kinds.push((p.midr, CpuSet::from_index(p.pu))),
            }
        }
        if kinds.is_empty() {
            return;
        }
        let imp = |v: u64| (v >> 24) & 0xff;
        let var = |v: u64| (v >> 20) & 0xf;
        let arch = |v: u64| (v >> 16) & 0xf;
        let part = |v: u64| (v >> 4) & 0xfff;
        let rev = |v: u64| v & 0xf;
        let fields: [&dyn Fn(u64) -> u64; 5] = [&imp, &arch, &var, &part, &rev];
        let v0 = kinds[0].0;
        let common: Vec<bool> = fields
            .iter()
            .map(|f| kinds.iter().all(|(v, _)| f(*v) == f(v0)))
            .collect();
        let describe = |k: usize, v: u64| -> Info {
            match k {
                0 => info("CPUImplementer", &format!("0x{:02x}", imp(v))),
                1 => info("CPUArchitecture", midr_arch(arch(v))),
                2 => info("CPUVariant", &format!("0x{:x}", var(v))),
                3 => info("CPUPart", &format!("0x{:03x}", part(v))),
                _ => info("CPURevision", &rev(v).to_string()),
            }
        };
        if kinds.len() > 1 {
            for (v, set) in &kinds {
                let capacity = by_pu
                    .iter()
                    .filter(|p| set.is_set(p.pu))
                    .map(|p| p.capacity)
                    .min()
                    .unwrap_or(0);
                let mut infos = vec![info("LinuxCapacity", &capacity.to_string())];
                for (k, c) in common.iter().enumerate() {
                    if !c {
                        infos.push(describe(k, *v));
                    }
                }
                let eff = i32::try_from(capacity).unwrap_or(i32::MAX);
                self.register_cpukind(set.clone(), Some(eff), infos);
            }
        }
        for (k, c) in common.iter().enumerate() {
            if *c {
                self.cpukinds_pkg_infos.push(describe(k, v0));
            }
        }
    }

    /// Packages (or the root) get the MIDR fields common to all kinds.
    pub(crate) fn annotate_packages_with_cpukinds(&mut self) {
        if self.cpukinds_pkg_infos.is_empty() {
            return;
        }
        let mut packages: Vec<ObjId> = Vec::new();
        let mut stack = vec![self.topo.root()];
        while let Some(id) = stack.pop() {
            let o = self.topo.obj(id);
            if o.obj_type == ObjType::Package {
                packages.push(id);
                continue;
            }
            stack.extend(o.children().iter().copied());
        }
        if packages.is_empty() {
            packages.push(self.topo.root());
        }
        let infos = self.cpukinds_pkg_infos.clone();
        for p in packages {
            self.topo.obj_mut(p).infos.extend(infos.iter().cloned());
        }
    }
}

/// For PUs sharing a base frequency, maximal frequencies within `adjust`
/// percent of each other (turbo boost variations) count as one, and
/// capacities too.
fn adjust_maxfreqs(by_pu: &mut [PuInfo], adjust: u32) {
    let n = by_pu.len();
    let mut done = vec![false; n];
    let mut first = 0;
    let mut ndone = 0;
    while ndone < n {
        let base = by_pu[first].base_freq;
        let (mut min_max, mut max_max) = (by_pu[first].max_freq, by_pu[first].max_freq);
        let (mut min_cap, mut max_cap) = (by_pu[first].capacity, by_pu[first].capacity);
        done[first] = true;
        ndone += 1;
        let mut next = 0;
        for i in first + 1..n {
            if done[i] {
                continue;
            }
            if by_pu[i].base_freq == base {
                let p = &by_pu[i];
                if p.max_freq > max_max {
                    max_max = p.max_freq;
                } else if p.max_freq < min_max {
                    min_max = p.max_freq;
                }
                if p.capacity > max_cap {
                    max_cap = p.capacity;
                } else if p.capacity < min_cap {
                    min_cap = p.capacity;
                }
                done[i] = true;
                ndone += 1;
            } else if next == 0 {
                next = i;
            }
        }
        let _ = max_cap;
        if min_max != max_max && min_max != 0 {
            let ratio = (max_max - min_max) as f32 / min_max as f32;
            if ratio * 100.0 < adjust as f32 {
                for p in by_pu[first..].iter_mut().filter(|p| p.base_freq == base) {
                    p.max_freq = min_max;
                    p.capacity = min_cap;
                }
            }
        }
        if ndone < n && next == 0 {
            // Should not happen; avoid looping forever.
            break;
        }
        first = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjusts_turbo_variations() {
        let mk = |pu, base, max| PuInfo {
            pu,
            base_freq: base,
            max_freq: max,
            ..Default::default()
        };
        let mut v = vec![
            mk(0, 2000, 4000),
            mk(1, 2000, 4100),
            mk(2, 1000, 3000),
            mk(3, 2000, 4000),
        ];
        adjust_maxfreqs(&mut v, 10);
        assert_eq!(
            v.iter().map(|p| p.max_freq).collect::<Vec<_>>(),
            vec![4000, 4000, 3000, 4000]
        );
        let sets = sets_by_value(v.iter().map(|p| (p.pu, p.max_freq)));
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[0].0, 3000);
    }
}
