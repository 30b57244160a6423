//! Topologies for the `cpuinfo` and `flat` topology methods.
//!
//! A `/proc/cpuinfo`-format file (`KMP_CPUINFO_FILE`) is a list of records
//! separated by blank lines; the fields `processor`, `physical id`,
//! `core id`, `thread id` and `node_N id` (levels of nodes above the
//! packages, `node_0` the closest) are used and the others ignored.
//! `apicid` is not used as a thread id: in real files it is the
//! machine-wide APIC id, and the runtime itself reads `thread id`.

use std::collections::{BTreeMap, HashMap, HashSet};

use wloc_core::object::{ObjAttr, group_kind};
use wloc_core::{CpuSet, ObjType, Object, Topology};

use crate::error::CpuinfoError;

/// One processor record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuinfoRecord {
    /// `processor`: the OS proc id.
    pub processor: u32,
    /// `physical id`: the package id.
    pub package: u32,
    /// `core id` (0 when absent).
    pub core: u32,
    /// `thread id`, when present.
    pub thread: Option<u32>,
    /// `node_N id` values, index N.
    pub nodes: Vec<u32>,
}

fn parse_value(line_no: usize, field: &str, v: &str) -> Result<u32, CpuinfoError> {
    v.trim().parse::<u32>().map_err(|_| CpuinfoError::BadValue {
        line: line_no,
        field: field.to_string(),
    })
}

/// Reads the records of a `/proc/cpuinfo`-format text.
pub fn parse_records(text: &str) -> Result<Vec<CpuinfoRecord>, CpuinfoError> {
    let mut out = Vec::new();
    let mut fields: HashMap<String, u32> = HashMap::new();
    let mut start = 0usize;
    let mut seen_procs = HashSet::new();
    let flush = |fields: &mut HashMap<String, u32>,
                 start: usize,
                 out: &mut Vec<CpuinfoRecord>,
                 seen: &mut HashSet<u32>|
     -> Result<(), CpuinfoError> {
        if fields.is_empty() {
            return Ok(());
        }
        let processor = *fields
            .get("processor")
            .ok_or(CpuinfoError::MissingProcField(start))?;
        let package = *fields
            .get("physical id")
            .ok_or(CpuinfoError::MissingPhysicalIdField(start))?;
        if !seen.insert(processor) {
            return Err(CpuinfoError::DuplicateProcessor(processor));
        }
        let mut nodes = Vec::new();
        for (k, v) in fields.iter() {
            if let Some(n) = k.strip_prefix("node_").and_then(|r| r.strip_suffix(" id")) {
                let n: usize = n.parse().unwrap_or(0);
                if nodes.len() <= n {
                    nodes.resize(n + 1, 0);
                }
                nodes[n] = *v;
            }
        }
        out.push(CpuinfoRecord {
            processor,
            package,
            core: fields.get("core id").copied().unwrap_or(0),
            thread: fields.get("thread id").copied(),
            nodes,
        });
        fields.clear();
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            flush(&mut fields, start, &mut out, &mut seen_procs)?;
            continue;
        }
        if fields.is_empty() {
            start = line_no;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim_end();
        let used = matches!(key, "processor" | "physical id" | "core id" | "thread id")
            || key
                .strip_prefix("node_")
                .and_then(|r| r.strip_suffix(" id"))
                .is_some_and(|n| {
                    !n.is_empty() && n.len() < 4 && n.bytes().all(|b| b.is_ascii_digit())
                });
        if !used {
            continue;
        }
        if fields.contains_key(key) {
            return Err(CpuinfoError::DuplicateField {
                line: line_no,
                field: key.to_string(),
            });
        }
        let v = parse_value(line_no, key, value)?;
        if key == "processor" && v > crate::proclist::MAX_PROC_ID {
            return Err(CpuinfoError::BadValue {
                line: line_no,
                field: key.to_string(),
            });
        }
        fields.insert(key.to_string(), v);
    }
    flush(&mut fields, start, &mut out, &mut seen_procs)?;
    if out.is_empty() {
        return Err(CpuinfoError::NoProcRecords);
    }
    Ok(out)
}

fn insert(topo: &mut Topology, obj: Object) -> Result<(), CpuinfoError> {
    topo.insert_by_cpuset(obj)
        .map(|_| ())
        .map_err(|e| CpuinfoError::Topology(e.to_string()))
}

/// Builds the topology a `/proc/cpuinfo`-format text describes: node
/// levels as Groups (subtype `node_N`), packages, cores and PUs.  Thread
/// ids missing from every record are assigned in processor order within
/// each core; ids given but not unique are an error.
pub fn topology_from_cpuinfo(text: &str) -> Result<Topology, CpuinfoError> {
    let mut recs = parse_records(text)?;
    recs.sort_by_key(|r| r.processor);
    let levels = recs.iter().map(|r| r.nodes.len()).max().unwrap_or(0);
    for r in &mut recs {
        r.nodes.resize(levels, 0);
    }
    let assign = recs.iter().all(|r| r.thread.is_none());
    let mut next_thread: HashMap<(Vec<u32>, u32, u32), u32> = HashMap::new();
    let mut unique = HashSet::new();
    for r in &mut recs {
        let core_key = (r.nodes.clone(), r.package, r.core);
        let th = if assign {
            let n = next_thread.entry(core_key.clone()).or_insert(0);
            *n += 1;
            *n - 1
        } else {
            r.thread.unwrap_or(0)
        };
        r.thread = Some(th);
        if !unique.insert((core_key, th)) {
            return Err(CpuinfoError::IdsNotUnique);
        }
    }
    // Objects by their id path, with their PUs.
    let mut nodes: BTreeMap<(usize, Vec<u32>), CpuSet> = BTreeMap::new();
    let mut packages: BTreeMap<(Vec<u32>, u32), CpuSet> = BTreeMap::new();
    let mut cores: BTreeMap<(Vec<u32>, u32, u32), CpuSet> = BTreeMap::new();
    for r in &recs {
        for n in 0..levels {
            // Node n is identified by its own id and those of the levels above it.
            let path = r.nodes[n..].to_vec();
            nodes.entry((n, path)).or_default().set(r.processor);
        }
        packages
            .entry((r.nodes.clone(), r.package))
            .or_default()
            .set(r.processor);
        cores
            .entry((r.nodes.clone(), r.package, r.core))
            .or_default()
            .set(r.processor);
    }
    let mut topo = Topology::new();
    for ((n, path), set) in nodes.into_iter().rev() {
        let mut g = Object::with_cpuset(ObjType::Group, Some(path[0]), set);
        g.subtype = Some(format!("node_{n}"));
        if let ObjAttr::Group(a) = &mut g.attr {
            a.kind = group_kind::USER;
            a.subkind = n as u32;
            a.dont_merge = true;
        }
        insert(&mut topo, g)?;
    }
    for ((_, pkg), set) in packages {
        insert(
            &mut topo,
            Object::with_cpuset(ObjType::Package, Some(pkg), set),
        )?;
    }
    for ((_, _, core), set) in cores {
        insert(
            &mut topo,
            Object::with_cpuset(ObjType::Core, Some(core), set),
        )?;
    }
    for r in &recs {
        insert(
            &mut topo,
            Object::with_cpuset(
                ObjType::PU,
                Some(r.processor),
                CpuSet::from_index(r.processor),
            ),
        )?;
    }
    topo.finish()
        .map_err(|e| CpuinfoError::Topology(e.to_string()))?;
    Ok(topo)
}

/// The flat topology of a set of OS procs: each proc alone in its own
/// package (whose id is the proc's id), with one core.
pub fn flat_topology(procs: &CpuSet) -> Result<Topology, CpuinfoError> {
    let mut topo = Topology::new();
    for p in procs.iter() {
        let set = CpuSet::from_index(p);
        insert(
            &mut topo,
            Object::with_cpuset(ObjType::Package, Some(p), set.clone()),
        )?;
        insert(
            &mut topo,
            Object::with_cpuset(ObjType::Core, Some(0), set.clone()),
        )?;
        insert(&mut topo, Object::with_cpuset(ObjType::PU, Some(p), set))?;
    }
    topo.finish()
        .map_err(|e| CpuinfoError::Topology(e.to_string()))?;
    Ok(topo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{HwType, Machine, Method};

    /// The seed's two-socket machine: sockets 0 and 3, two cores each,
    /// two threads per core, OS procs interleaved across sockets.
    pub(crate) const SEED_HT: &str = "\
processor : 0\nphysical id : 0\ncore id : 0\nthread id : 0\n\n\
processor : 1\nphysical id : 3\ncore id : 0\nthread id : 0\n\n\
processor : 2\nphysical id : 0\ncore id : 1\nthread id : 0\n\n\
processor : 3\nphysical id : 3\ncore id : 1\nthread id : 0\n\n\
processor : 4\nphysical id : 0\ncore id : 0\nthread id : 1\n\n\
processor : 5\nphysical id : 3\ncore id : 0\nthread id : 1\n\n\
processor : 6\nphysical id : 0\ncore id : 1\nthread id : 1\n\n\
processor : 7\nphysical id : 3\ncore id : 1\nthread id : 1\n";

    #[test]
    fn seed_machine_from_cpuinfo() {
        let t = topology_from_cpuinfo(SEED_HT).unwrap();
        let m = Machine::new(&t, Method::Cpuinfo, &CpuSet::full());
        assert_eq!(
            m.topology_line(),
            "2 sockets x 2 cores/socket x 2 threads/core (4 total cores)"
        );
        let order: Vec<u32> = m.threads().iter().map(|t| t.os_id).collect();
        assert_eq!(order, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(m.location(&m.threads()[7]), "socket 3 core 1 thread 1 ");
    }

    #[test]
    fn missing_thread_ids_are_assigned_and_other_fields_ignored() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nphysical id\t: 0\nsiblings\t: 2\ncore id\t: 0\napicid\t: 0\n\n\
processor\t: 1\nphysical id\t: 0\nsiblings\t: 2\ncore id\t: 0\napicid\t: 1\n";
        let t = topology_from_cpuinfo(text).unwrap();
        let m = Machine::new(&t, Method::Cpuinfo, &CpuSet::full());
        assert_eq!(
            m.topology_line(),
            "1 sockets x 1 cores/socket x 2 threads/core (1 total cores)"
        );
    }

    #[test]
    fn node_levels() {
        let mut text = String::new();
        for p in 0..8u32 {
            text.push_str(&format!(
                "processor : {p}\nnode_1 id : {}\nnode_0 id : {}\nphysical id : {}\ncore id : {}\n\n",
                p / 8,
                p / 4,
                p / 2,
                p % 2
            ));
        }
        let t = topology_from_cpuinfo(&text).unwrap();
        let m = Machine::new(&t, Method::Cpuinfo, &CpuSet::full());
        assert_eq!(
            m.types(),
            &[HwType::Numa, HwType::Socket, HwType::Core, HwType::Thread]
        );
        assert_eq!(
            m.topology_line(),
            "2 NUMA domains x 2 sockets/NUMA domain x 2 cores/socket x 1 threads/core (8 total cores)"
        );
        assert_eq!(m.groups(HwType::Numa).len(), 2);
    }

    #[test]
    fn errors() {
        assert_eq!(
            topology_from_cpuinfo("").unwrap_err(),
            CpuinfoError::NoProcRecords
        );
        assert_eq!(
            topology_from_cpuinfo("processor : 0\ncore id : 0\n").unwrap_err(),
            CpuinfoError::MissingPhysicalIdField(1)
        );
        assert_eq!(
            topology_from_cpuinfo("physical id : 0\n").unwrap_err(),
            CpuinfoError::MissingProcField(1)
        );
        assert!(matches!(
            topology_from_cpuinfo("processor : x\nphysical id : 0\n").unwrap_err(),
            CpuinfoError::BadValue { line: 1, .. }
        ));
        assert!(matches!(
            topology_from_cpuinfo("processor : 0\nprocessor : 1\nphysical id : 0\n").unwrap_err(),
            CpuinfoError::DuplicateField { line: 2, .. }
        ));
        assert_eq!(
            topology_from_cpuinfo(
                "processor : 0\nphysical id : 0\n\nprocessor : 0\nphysical id : 1\n"
            )
            .unwrap_err(),
            CpuinfoError::DuplicateProcessor(0)
        );
        assert_eq!(
            topology_from_cpuinfo(
                "processor : 0\nphysical id : 0\nthread id : 0\n\nprocessor : 1\nphysical id : 0\nthread id : 0\n"
            )
            .unwrap_err(),
            CpuinfoError::IdsNotUnique
        );
    }

    #[test]
    fn flat() {
        let t = flat_topology(&CpuSet::parse_list("0-3").unwrap()).unwrap();
        let m = Machine::new(&t, Method::Flat, &CpuSet::full());
        assert_eq!(
            m.topology_line(),
            "4 sockets x 1 cores/socket x 1 threads/core (4 total cores)"
        );
        assert_eq!(m.location(&m.threads()[2]), "socket 2 core 0 thread 0 ");
    }
}
