//! The arithmetic and parsing of the sensor files, apart from the file
//! access so that it is tested natively: counter deltas across wraps, CPU
//! times from `/proc/stat`, node `meminfo`, the previous sample the host
//! hands back.

use std::collections::HashMap;

/// The first line of a small file, without its newline.
pub fn first_line(b: &[u8]) -> String {
    let end = b
        .iter()
        .position(|&c| c == b'\n' || c == 0)
        .unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// An integer reading (sysfs files hold one decimal integer).
pub fn reading(b: &[u8]) -> Option<f64> {
    first_line(b).trim().parse::<i64>().ok().map(|v| v as f64)
}

/// An unsigned counter reading (`energy_uj`, `ce_count`).
pub fn counter(b: &[u8]) -> Option<u64> {
    first_line(b).trim().parse::<u64>().ok()
}

/// A label as a name component: no spaces, no dots.
pub fn token(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '.' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The energy used between two readings of a counter that counts up to
/// `max` and then starts again from 0 (RAPL's `energy_uj` and
/// `max_energy_range_uj`).  A reading below the previous one means the
/// counter wrapped once (a sampling interval shorter than the counter's
/// range, which is minutes even at hundreds of watts, is assumed), so the
/// energy is what was left to `max` plus the new reading; this is how
/// the kernel's own tools (turbostat) count it.  None when the counter
/// went back without a known range, or when a reading lies beyond it.
pub fn wrapped_delta(prev: f64, cur: f64, max: Option<f64>) -> Option<f64> {
    if prev < 0.0 || cur < 0.0 {
        return None;
    }
    if let Some(m) = max
        && (prev > m || cur > m)
    {
        return None;
    }
    if cur >= prev {
        Some(cur - prev)
    } else {
        max.map(|m| m - prev + cur)
    }
}

/// Time a CPU spent busy and idle, in USER_HZ ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    pub busy: u64,
    pub idle: u64,
}

/// The `cpu` lines of `/proc/stat`: `None` for the machine's total line,
/// `Some(n)` for `cpuN`.  Busy time is user, nice, system, irq, softirq
/// and steal; idle time is idle and iowait.  Guest time is left out: the
/// kernel already counts it in user (and guest_nice in nice).  Lines with
/// fewer than the 4 fields every kernel gives are skipped; later fields
/// (iowait and on, Linux 2.6+) count as 0 when missing.
pub fn proc_stat(text: &str) -> Vec<(Option<u32>, CpuTimes)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(head) = words.next() else { continue };
        let Some(which) = head.strip_prefix("cpu") else {
            continue;
        };
        let cpu = if which.is_empty() {
            None
        } else {
            match which.parse::<u32>() {
                Ok(n) => Some(n),
                Err(_) => continue,
            }
        };
        let v: Vec<u64> = words.map_while(|w| w.parse::<u64>().ok()).collect();
        if v.len() < 4 {
            continue;
        }
        let f = |i: usize| v.get(i).copied().unwrap_or(0);
        let busy = f(0)
            .saturating_add(f(1))
            .saturating_add(f(2))
            .saturating_add(f(5))
            .saturating_add(f(6))
            .saturating_add(f(7));
        let idle = f(3).saturating_add(f(4));
        out.push((cpu, CpuTimes { busy, idle }));
    }
    out
}

/// Utilisation in percent between two samples of busy and idle times:
/// the busy share of the time that passed.  None when no time passed or
/// a counter went back (a CPU taken offline and back resets nothing, but
/// a reboot between samples would).
pub fn utilisation(prev_busy: f64, prev_idle: f64, busy: f64, idle: f64) -> Option<f64> {
    let db = busy - prev_busy;
    let di = idle - prev_idle;
    if db < 0.0 || di < 0.0 || db + di <= 0.0 {
        return None;
    }
    Some(100.0 * db / (db + di))
}

/// Memory of a NUMA node, in bytes, from its `meminfo`
/// (`Node 0 MemTotal:  16318480 kB`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeMemory {
    pub total: Option<u64>,
    pub free: Option<u64>,
    pub used: Option<u64>,
}

/// Reads a node's `meminfo`.  `MemUsed` is the kernel's total minus
/// free; it is computed that way when the line is missing.
pub fn node_meminfo(text: &str) -> NodeMemory {
    let mut m = NodeMemory::default();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let Some(field) = key.split_ascii_whitespace().last() else {
            continue;
        };
        let mut words = rest.split_ascii_whitespace();
        let Some(v) = words.next().and_then(|w| w.parse::<u64>().ok()) else {
            continue;
        };
        // Sizes are in kB (KiB); counts such as HugePages_Total have no unit.
        if words.next() != Some("kB") {
            continue;
        }
        let bytes = v.checked_mul(1024);
        match field {
            "MemTotal" => m.total = bytes,
            "MemFree" => m.free = bytes,
            "MemUsed" => m.used = bytes,
            _ => {}
        }
    }
    if m.used.is_none()
        && let (Some(t), Some(f)) = (m.total, m.free)
    {
        m.used = t.checked_sub(f);
    }
    m
}

/// The previous sample the host hands back (setting `sample.previous`):
/// one `OBJECT<TAB>NAME<TAB>VALUE` line per property, the object by gp
/// index.  Malformed lines are skipped: this is the host's own output.
pub fn previous(text: &str) -> HashMap<(u64, String), f64> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let mut f = line.split('\t');
        let (Some(o), Some(n), Some(v), None) = (f.next(), f.next(), f.next(), f.next()) else {
            continue;
        };
        let (Ok(o), Ok(v)) = (o.parse::<u64>(), v.parse::<f64>()) else {
            continue;
        };
        if v.is_finite() {
            out.insert((o, n.to_string()), v);
        }
    }
    out
}

/// The seconds since the previous sample (setting `sample.elapsed`),
/// when positive and finite.
pub fn elapsed(text: &str) -> Option<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
}

/// The last PCI bus id (`dddd:bb:dd.f`) among the components of a path.
pub fn pci_busid(path: &str) -> Option<String> {
    path.split('/')
        .rfind(|c| {
            let b = c.as_bytes();
            b.len() == 12
                && b[4] == b':'
                && b[7] == b':'
                && b[10] == b'.'
                && c.chars()
                    .enumerate()
                    .all(|(i, ch)| matches!(i, 4 | 7 | 10) || ch.is_ascii_hexdigit())
        })
        .map(str::to_ascii_lowercase)
}

/// The number at the end of a name with a given prefix (`hwmon3`,
/// `thermal_zone0`, `mc1`, `node2`), for sorting and for OS indexes.
pub fn numbered(name: &str, prefix: &str) -> Option<u32> {
    let n = name.strip_prefix(prefix)?;
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The package a RAPL zone name measures: `package-1` and
/// `package-1-die-0` are package 1.
pub fn rapl_package(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("package-")?;
    let digits = rest.split('-').next()?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_wrap_at_their_range() {
        // 10 J read, then 2 J after the counter passed 262143.328850 J.
        let max = 262_143.328_850;
        let d = wrapped_delta(262_140.0, 2.0, Some(max)).unwrap();
        assert!((d - 5.328_850).abs() < 1e-9, "{d}");
        assert_eq!(wrapped_delta(10.0, 25.5, Some(max)), Some(15.5));
        assert_eq!(wrapped_delta(10.0, 10.0, None), Some(0.0));
        // Went back with no range known: no value rather than a wrong one.
        assert_eq!(wrapped_delta(10.0, 5.0, None), None);
        // A reading outside the range is not believed.
        assert_eq!(wrapped_delta(10.0, 500.0, Some(100.0)), None);
        assert_eq!(wrapped_delta(-1.0, 5.0, Some(100.0)), None);
    }

    #[test]
    fn proc_stat_busy_and_idle_times() {
        let text = "cpu  100 20 30 400 50 6 7 8 9 10\n\
                    cpu0 60 10 20 200 25 3 4 5 9 10\n\
                    cpu12 40 10 10 200 25 3 3 3\n\
                    cpux 1 2 3 4\n\
                    cpu3 1 2\n\
                    intr 5 6 7\n\
                    ctxt 99\n";
        let s = proc_stat(text);
        assert_eq!(
            s,
            vec![
                // 100+20+30+6+7+8 busy, 400+50 idle; guest not added again.
                (
                    None,
                    CpuTimes {
                        busy: 171,
                        idle: 450
                    }
                ),
                (
                    Some(0),
                    CpuTimes {
                        busy: 102,
                        idle: 225
                    }
                ),
                (
                    Some(12),
                    CpuTimes {
                        busy: 69,
                        idle: 225
                    }
                ),
            ]
        );
    }

    #[test]
    fn utilisation_is_the_busy_share() {
        assert_eq!(utilisation(100.0, 300.0, 130.0, 370.0), Some(30.0));
        assert_eq!(utilisation(100.0, 300.0, 100.0, 300.0), None);
        assert_eq!(utilisation(100.0, 300.0, 90.0, 400.0), None);
        assert_eq!(utilisation(0.0, 0.0, 5.0, 0.0), Some(100.0));
    }

    #[test]
    fn node_meminfo_in_bytes() {
        let text = "Node 1 MemTotal:       16318480 kB\n\
                    Node 1 MemFree:         8159240 kB\n\
                    Node 1 MemUsed:         8159240 kB\n\
                    Node 1 HugePages_Total:     0\n";
        let m = node_meminfo(text);
        assert_eq!(m.total, Some(16_318_480 * 1024));
        assert_eq!(m.free, Some(8_159_240 * 1024));
        assert_eq!(m.used, Some(8_159_240 * 1024));
        let m = node_meminfo("Node 0 MemTotal: 100 kB\nNode 0 MemFree: 40 kB\n");
        assert_eq!(m.used, Some(60 * 1024));
        assert_eq!(
            node_meminfo("garbage\n:\nNode 0 MemTotal: x kB"),
            NodeMemory::default()
        );
    }

    #[test]
    fn previous_samples_round_trip() {
        let p = previous("5\tenergy.rapl.package-0\t12.5\nbad line\n7\tx\tNaN\n9\ty\t1e3\n");
        assert_eq!(p.len(), 2);
        assert_eq!(p[&(5, "energy.rapl.package-0".into())], 12.5);
        assert_eq!(p[&(9, "y".into())], 1000.0);
        assert_eq!(elapsed("2.5"), Some(2.5));
        assert_eq!(elapsed("0"), None);
        assert_eq!(elapsed("inf"), None);
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(token(" Package id 0\n"), "Package_id_0");
        assert_eq!(reading(b"45000\n"), Some(45000.0));
        assert_eq!(reading(b"x"), None);
        assert_eq!(counter(b"18446744073709551615\n"), Some(u64::MAX));
        assert_eq!(numbered("hwmon12", "hwmon"), Some(12));
        assert_eq!(numbered("hwmon", "hwmon"), None);
        assert_eq!(numbered("mc1x", "mc"), None);
        assert_eq!(rapl_package("package-1-die-0"), Some(1));
        assert_eq!(rapl_package("package-3"), Some(3));
        assert_eq!(rapl_package("psys"), None);
        assert_eq!(
            pci_busid("../../devices/pci0000:00/0000:00:18.3/hwmon/hwmon2").as_deref(),
            Some("0000:00:18.3")
        );
        assert_eq!(
            pci_busid("../../devices/platform/coretemp.0/hwmon/hwmon1"),
            None
        );
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parsers_take_any_bytes(b in proptest::collection::vec(any::<u8>(), 0..512)) {
            let text = String::from_utf8_lossy(&b);
            let _ = proc_stat(&text);
            let _ = node_meminfo(&text);
            let _ = previous(&text);
            let _ = elapsed(&text);
            let _ = reading(&b);
            let _ = counter(&b);
            let _ = pci_busid(&text);
            let _ = rapl_package(&text);
        }

        #[test]
        fn a_wrapped_counter_gives_the_energy_used(
            max in 1u64..1_000_000_000_000,
            start in 0u64..1_000_000_000_000,
            used in 0u64..1_000_000_000_000,
        ) {
            let start = start % (max + 1);
            let used = used % (max + 1);
            // The counter counts modulo max (as the tools assume).
            let cur = (start + used) % max;
            let d = wrapped_delta(start as f64, cur as f64, Some(max as f64)).unwrap();
            prop_assert!((d - used as f64).abs() < 1e-3 || (used == max && d == 0.0),
                "start {start} used {used} max {max}: {d}");
        }

        #[test]
        fn proc_stat_lines_read_back(
            cpus in proptest::collection::vec(proptest::array::uniform10(0u64..1 << 40), 1..8)
        ) {
            let mut text = String::new();
            for (k, v) in cpus.iter().enumerate() {
                let f: Vec<String> = v.iter().map(u64::to_string).collect();
                text.push_str(&format!("cpu{k} {}\n", f.join(" ")));
            }
            let s = proc_stat(&text);
            prop_assert_eq!(s.len(), cpus.len());
            for (k, v) in cpus.iter().enumerate() {
                prop_assert_eq!(s[k].0, Some(k as u32));
                prop_assert_eq!(s[k].1.busy, v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
                prop_assert_eq!(s[k].1.idle, v[3] + v[4]);
            }
        }
    }
}
