//! PCI devices and bridges from `/sys/bus/pci/devices`, host bridges, the
//! locality of PCI buses (`local_cpus`, `HWLOC_PCI_LOCALITY`) and PCI slots.

use wloc_core::object::{BridgeAttr, BridgeUpstream, PciAttr, group_kind};
use wloc_core::topology::{Inserted, PciLocality, pci_class_is_important};
use wloc_core::{CpuSet, ObjAttr, ObjId, ObjType, Object, Topology, TypeFilter};

use crate::cpu::group;
use crate::ctx::{Ctx, Forced, Locality};
use crate::parse;

const PCI: &str = "/sys/bus/pci/devices";

/// A PCI domain, bus, device and function.
type BusId = (u32, u8, u8, u8);

/// Most PCI functions considered.
const MAX_PCI_DEVICES: usize = 1 << 14;

/// A bus range and the CPUs near it, before objects are attached.
#[derive(Clone, Debug)]
struct BusRange {
    domain: u32,
    min: u32,
    max: u32,
    /// `None`: the whole machine.
    cpuset: Option<CpuSet>,
}

/// A PCI function (device or bridge) with the functions below it.
#[derive(Clone, Debug)]
pub(crate) struct PciNode {
    obj: Object,
    domain: u32,
    bus: u8,
    dev: u8,
    func: u8,
    /// Downstream domain and bus range of bridges.
    down: Option<(u32, u8, u8)>,
    /// Host bridges have no PCI identity of their own.
    host: bool,
    children: Vec<PciNode>,
}

#[derive(PartialEq, Eq)]
enum BusCmp {
    Lower,
    Higher,
    Included,
    Superset,
    Equal,
}

fn compare(a: &PciNode, b: &PciNode) -> BusCmp {
    if a.domain != b.domain {
        return if a.domain < b.domain {
            BusCmp::Lower
        } else {
            BusCmp::Higher
        };
    }
    if let Some((_, sec, sub)) = a.down
        && b.bus >= sec
        && b.bus <= sub
    {
        return BusCmp::Superset;
    }
    if let Some((_, sec, sub)) = b.down
        && a.bus >= sec
        && a.bus <= sub
    {
        return BusCmp::Included;
    }
    match (a.bus, a.dev, a.func).cmp(&(b.bus, b.dev, b.func)) {
        std::cmp::Ordering::Less => BusCmp::Lower,
        std::cmp::Ordering::Greater => BusCmp::Higher,
        std::cmp::Ordering::Equal => BusCmp::Equal,
    }
}

/// Inserts a function in a tree sorted by bus id, below the bridge whose
/// bus range holds it, and moves existing functions below a new bridge.
fn add_object(list: &mut Vec<PciNode>, new: PciNode, depth: u32) {
    if depth > 256 {
        return;
    }
    let mut i = 0;
    while i < list.len() {
        match compare(&new, &list[i]) {
            BusCmp::Higher => i += 1,
            BusCmp::Included => return add_object(&mut list[i].children, new, depth + 1),
            BusCmp::Equal => return,
            BusCmp::Lower | BusCmp::Superset => {
                let is_bridge = new.down.is_some();
                list.insert(i, new);
                if is_bridge {
                    let mut j = i + 1;
                    while j < list.len() {
                        let (nd, sub) = {
                            let n = &list[i];
                            (n.domain, n.down.map(|d| d.2).unwrap_or(0))
                        };
                        if compare(&list[i], &list[j]) == BusCmp::Lower {
                            let cur = &list[j];
                            if cur.domain > nd || cur.bus > sub {
                                break;
                            }
                            j += 1;
                        } else {
                            let moved = list.remove(j);
                            list[i].children.push(moved);
                        }
                    }
                }
                return;
            }
        }
    }
    list.push(new);
}

/// Lane speed in GT/s (times encoding efficiency) from sysfs
/// `current_link_speed` (`8.0 GT/s PCIe`).
fn link_speed_from_string(s: &str) -> f32 {
    let v = match parse::strtoul(s, 10) {
        Some((v, _)) => v,
        None => return 0.0,
    };
    if s.trim_start().starts_with("2.5") {
        return 2.5 * 0.8;
    }
    match v {
        5 => 5.0 * 0.8,
        8 | 16 | 32 => v as f32 * 128.0 / 130.0,
        64 | 128 | 256 => v as f32 * 242.0 / 256.0,
        _ => 0.0,
    }
}

/// PCIe link speed in GB/s from `current_link_speed` and
/// `current_link_width` (0 when either is missing or unknown).
fn sysfs_link_speed(speed: &Option<Vec<u8>>, width: &Option<Vec<u8>>) -> f32 {
    let speed = speed
        .as_ref()
        .map(|b| link_speed_from_string(&parse::text(&b[..b.len().min(15)])))
        .unwrap_or(0.0);
    let width = width
        .as_ref()
        .map(|b| parse::atoi(&parse::text(&b[..b.len().min(15)])).clamp(0, 1024))
        .unwrap_or(0);
    speed * width as f32 / 8.0
}

/// Offset of a PCI capability in the first 256 bytes of config space.
fn find_cap(config: &[u8; 256], cap: u8) -> usize {
    if config[0x06] & 0x10 == 0 {
        return 0;
    }
    let mut seen = [false; 256];
    let mut ptr = (config[0x34] & !3) as usize;
    while ptr != 0 {
        if seen[ptr] {
            break;
        }
        seen[ptr] = true;
        let id = config[ptr];
        if id == cap {
            return ptr;
        }
        if id == 0xff {
            break;
        }
        ptr = (config[(ptr + 1).min(255)] & !3) as usize;
    }
    0
}

/// PCIe link speed in GB/s from the link status register.
fn config_link_speed(config: &[u8; 256], offset: usize) -> f32 {
    let lnksta = u16::from_le_bytes([config[offset + 0x12], config[offset + 0x13]]) as u32;
    let speed = lnksta & 0xf;
    let width = (lnksta & 0x3f0) >> 4;
    let lane = if speed <= 2 {
        2.5 * speed as f32 * 0.8
    } else if speed <= 5 {
        8.0 * (1u32 << (speed - 3)) as f32 * 128.0 / 130.0
    } else {
        8.0 * (1u32 << (speed - 3)) as f32 * 242.0 / 256.0
    };
    lane * width as f32 / 8.0
}

/// Parses `HWLOC_PCI_LOCALITY`: `domain:bus-bus cpuset`, `domain:bus
/// cpuset` or `domain cpuset`, separated by `;` or new lines.
pub(crate) fn parse_forced(s: &str) -> Vec<Forced> {
    let mut out = Vec::new();
    for item in s.split([';', '\r', '\n']).take(4096) {
        let item = item.trim_start();
        let Some(space) = item.find(' ') else {
            continue;
        };
        let (loc, set) = (&item[..space], item[space + 1..].trim());
        let hex = |s: &str| -> Option<u32> {
            let (v, used) = parse::strtoul(s, 16)?;
            (used == s.len() && v <= u32::MAX as u64).then_some(v as u32)
        };
        let (domain, first, last) = match loc.split_once(':') {
            Some((d, buses)) => {
                let d = match hex(d) {
                    Some(d) => d,
                    None => continue,
                };
                match buses.split_once('-') {
                    Some((a, b)) => match (hex(a), hex(b)) {
                        (Some(a), Some(b)) => (d, a, b),
                        _ => continue,
                    },
                    None => match hex(buses) {
                        Some(a) => (d, a, a),
                        None => continue,
                    },
                }
            }
            None => match hex(loc) {
                Some(d) => (d, 0, 255),
                None => continue,
            },
        };
        let cpuset = CpuSet::parse(set).unwrap_or_default();
        out.push(Forced {
            domain,
            bus_first: first,
            bus_last: last.min(255),
            cpuset,
        });
    }
    out
}

/// Bus ranges of the HPE Cray EX235A, whose firmware reports no locality.
fn cray_ex235a_quirk(domain: u32, bus: u8) -> Option<CpuSet> {
    if domain != 0 {
        return None;
    }
    let table: [(u8, u8, u32, u32); 8] = [
        (0xd0, 0xd1, 0, 64),
        (0xd4, 0xd6, 8, 72),
        (0xc8, 0xc9, 16, 80),
        (0xcc, 0xce, 24, 88),
        (0xd8, 0xd9, 32, 96),
        (0xdc, 0xde, 40, 104),
        (0xc0, 0xc1, 48, 112),
        (0xc4, 0xc6, 56, 120),
    ];
    for (lo, hi, a, b) in table {
        if bus >= lo && bus <= hi {
            let mut s = CpuSet::from_range(a, Some(a + 7));
            s.set_range(b, Some(b + 7));
            return Some(s);
        }
    }
    None
}

impl Ctx<'_> {
    /// Reads every PCI function into a tree sorted by bus id.  Functions
    /// get their gp indexes in hwloc's order: the folder's `readdir` order
    /// (as far as it is known, see [`Ctx::readdir_order`]), counting the
    /// functions the topology drops later (host bridge devices).
    fn read_pci_tree(&mut self) -> Vec<PciNode> {
        let mut tree: Vec<PciNode> = Vec::new();
        let Some(mut entries) = self.fs.list(PCI) else {
            return tree;
        };
        entries.sort();
        entries.truncate(MAX_PCI_DEVICES);
        self.readdir_order(PCI, &mut entries);
        let pfilter = self.filter(ObjType::PCIDevice);
        let bfilter = self.filter(ObjType::Bridge);
        let devs: Vec<(&String, BusId)> = entries
            .iter()
            .filter_map(|e| parse::pci_busid(e).map(|b| (e, b)))
            .collect();
        // First the class of every function, and the config header of
        // bridges; then the identifiers of the functions kept, read from
        // small sysfs files; the config space itself (slow to read on some
        // machines) only where those files are missing.
        let paths: Vec<String> = devs
            .iter()
            .map(|(name, _)| format!("{PCI}/{name}/class"))
            .collect();
        let hexval = |b: &Option<Vec<u8>>| -> Option<u64> {
            let b = b.as_ref().filter(|b| !b.is_empty())?;
            let t = parse::text(&b[..b.len().min(15)]);
            Some(parse::strtoul(&t, 16).map(|x| x.0).unwrap_or(0))
        };
        let classes: Vec<(u16, u8)> = self
            .read_batch(&paths)
            .iter()
            .map(|b| match hexval(b) {
                Some(full) => ((full >> 8) as u16, (full & 0xff) as u8),
                None => (0, 0),
            })
            .collect();
        let bridge_paths: Vec<String> = devs
            .iter()
            .zip(&classes)
            .filter(|(_, c)| c.0 == 0x0604)
            .map(|((name, _), _)| format!("{PCI}/{name}/config"))
            .collect();
        let mut headers = self.read_prefixes(&bridge_paths, 64).into_iter();
        struct Pending<'n> {
            name: &'n String,
            busid: BusId,
            class_id: u16,
            prog_if: u8,
            down: Option<(u32, u8, u8)>,
        }
        let mut kept: Vec<Pending> = Vec::new();
        for ((name, (domain, bus, dev, func)), &(class_id, prog_if)) in
            devs.into_iter().zip(&classes)
        {
            let mut down = None;
            if class_id == 0x0604 {
                let header = headers.next().flatten().unwrap_or_default();
                let byte = |i: usize| header.get(i).copied().unwrap_or(0xff);
                if byte(0x0e) & 0x7f == 1 {
                    let (sec, sub) = (byte(0x19), byte(0x1a));
                    if sec <= bus || sub <= bus || sec > sub {
                        continue;
                    }
                    down = Some((domain, sec, sub));
                }
            }
            if down.is_some() {
                if bfilter == TypeFilter::KeepNone {
                    continue;
                }
            } else if pfilter == TypeFilter::KeepNone
                || (pfilter == TypeFilter::KeepImportant && !pci_class_is_important(class_id))
            {
                continue;
            }
            kept.push(Pending {
                name,
                busid: (domain, bus, dev, func),
                class_id,
                prog_if,
                down,
            });
        }
        const FILES: [&str; 7] = [
            "vendor",
            "device",
            "subsystem_vendor",
            "subsystem_device",
            "revision",
            "current_link_speed",
            "current_link_width",
        ];
        let paths: Vec<String> = kept
            .iter()
            .flat_map(|p| FILES.iter().map(move |f| format!("{PCI}/{}/{f}", p.name)))
            .collect();
        let mut res = self.read_batch(&paths).into_iter();
        let mut values: Vec<Vec<Option<Vec<u8>>>> = Vec::with_capacity(kept.len());
        for _ in &kept {
            values.push((0..FILES.len()).map(|_| res.next().flatten()).collect());
        }
        // Config space where the revision is not in sysfs, or the link
        // speed when the kernel predates the link files: since Linux 4.13
        // every PCI Express function has them, so a function without them
        // has no PCI Express capability.  Config space reads can cost
        // milliseconds each (they trap to the hypervisor in a VM); the
        // release is trusted only for the running kernel, since a recording
        // may have left the link files out.
        // Functions whose link registers the kernel does not show (root
        // complex integrated endpoints say `Unknown` and 0) may still have
        // them in config space, where hwloc reads them first.
        let kernel_has_links = values.iter().any(|v| v[5].is_some())
            || (self.opts.this_system && self.uname.release_at_least(4, 13));
        let need: Vec<usize> = (0..kept.len())
            .filter(|&i| {
                let v = &values[i];
                v[4].is_none()
                    || (!kernel_has_links && (v[5].is_none() || v[6].is_none()))
                    || (v[5].is_some() && sysfs_link_speed(&v[5], &v[6]) == 0.0)
            })
            .collect();
        let paths: Vec<String> = need
            .iter()
            .map(|&i| format!("{PCI}/{}/config", kept[i].name))
            .collect();
        let mut configs: Vec<Option<[u8; 256]>> = vec![None; kept.len()];
        for (&i, c) in need.iter().zip(self.read_prefixes(&paths, 256)) {
            let mut config = [0xffu8; 256];
            if let Some(c) = c {
                config[..c.len().min(256)].copy_from_slice(&c[..c.len().min(256)]);
            }
            configs[i] = Some(config);
        }
        for ((p, v), config) in kept.into_iter().zip(values).zip(configs) {
            let (domain, bus, dev, func) = p.busid;
            let (class_id, prog_if, down) = (p.class_id, p.prog_if, p.down);
            let ids: Vec<u64> = (0..4).map(|k| hexval(&v[k]).unwrap_or(0)).collect();
            let revision = match (&v[4], &config) {
                (Some(_), _) => hexval(&v[4]).unwrap_or(0) as u8,
                (None, Some(c)) => c[0x08],
                (None, None) => 0xff,
            };
            let cap = config.as_ref().map(|c| find_cap(c, 0x10)).unwrap_or(0);
            let linkspeed = match (&v[5], &v[6], &config) {
                (_, _, Some(c)) if cap > 0 && cap + 20 <= 256 => config_link_speed(c, cap),
                (speed, width, _) => sysfs_link_speed(speed, width),
            };
            let attr = PciAttr {
                domain,
                bus,
                dev,
                func,
                class_id,
                vendor_id: ids[0] as u16,
                device_id: ids[1] as u16,
                subvendor_id: ids[2] as u16,
                subdevice_id: ids[3] as u16,
                revision,
                linkspeed,
                prog_if,
            };
            let mut obj = match down {
                Some((d, sec, sub)) => {
                    let mut o = Object::new(ObjType::Bridge, None);
                    o.attr = ObjAttr::Bridge(BridgeAttr {
                        upstream: BridgeUpstream::Pci(attr),
                        domain: d,
                        secondary_bus: sec,
                        subordinate_bus: sub,
                        depth: 0,
                    });
                    o
                }
                None => {
                    let mut o = Object::new(ObjType::PCIDevice, None);
                    o.attr = ObjAttr::Pci(attr);
                    o
                }
            };
            obj.gp_index = self.topo.alloc_gp_index();
            add_object(
                &mut tree,
                PciNode {
                    obj,
                    domain,
                    bus,
                    dev,
                    func,
                    down,
                    host: false,
                    children: Vec::new(),
                },
                0,
            );
        }
        tree
    }

    /// The first `max` bytes of several files, in one batch.
    fn read_prefixes(&self, paths: &[String], max: usize) -> Vec<Option<Vec<u8>>> {
        if paths.is_empty() {
            return Vec::new();
        }
        let refs: Vec<&str> = paths.iter().map(|s| s.as_str()).collect();
        let mut out = self.fs.read_many_prefix(&refs, max);
        out.resize(paths.len(), None);
        out
    }

    /// Groups the top of the tree below one host bridge per upstream bus.
    /// Host bridges get their gp indexes here, after every PCI function
    /// and before any I/O Group, as hwloc allocates them.
    fn add_hostbridges(topo: &mut Topology, tree: Vec<PciNode>) -> Vec<PciNode> {
        let mut out: Vec<PciNode> = Vec::new();
        for child in tree {
            let fits = out.last().is_some_and(|hb| {
                hb.children
                    .first()
                    .is_some_and(|f| f.domain == child.domain && f.bus == child.bus)
            });
            if !fits {
                let mut o = Object::new(ObjType::Bridge, None);
                o.gp_index = topo.alloc_gp_index();
                o.attr = ObjAttr::Bridge(BridgeAttr {
                    upstream: BridgeUpstream::Host,
                    domain: child.domain,
                    secondary_bus: child.bus,
                    subordinate_bus: child.bus,
                    depth: 0,
                });
                out.push(PciNode {
                    obj: o,
                    domain: child.domain,
                    bus: child.bus,
                    dev: 0,
                    func: 0,
                    down: Some((child.domain, child.bus, child.bus)),
                    host: true,
                    children: Vec::new(),
                });
            }
            let hb = out.last_mut().expect("a host bridge was just pushed");
            if let Some((_, _, sub)) = child.down
                && let Some(d) = hb.down.as_mut()
                && sub > d.2
            {
                d.2 = sub;
            }
            hb.children.push(child);
        }
        for hb in &mut out {
            if let (Some((_, _, sub)), ObjAttr::Bridge(b)) = (hb.down, &mut hb.obj.attr) {
                b.subordinate_bus = sub;
            }
        }
        out
    }

    /// The CPUs near a PCI bus as the OS (or a quirk) reports them.
    fn os_bus_cpuset(
        &self,
        domain: u32,
        bus: u8,
        dev: u8,
        func: u8,
        quirk: bool,
    ) -> Option<CpuSet> {
        if quirk && let Some(s) = cray_ex235a_quirk(domain, bus) {
            return Some(s);
        }
        let s = self.read_cpumask(&format!(
            "{PCI}/{domain:04x}:{bus:02x}:{dev:02x}.{func:01x}/local_cpus"
        ))?;
        (!s.is_empty()).then_some(s)
    }

    /// The I/O parent of a bus range: where its CPUs place it, the root
    /// when it has none.
    fn range_parent(&mut self, r: &BusRange) -> ObjId {
        r.cpuset
            .as_ref()
            .and_then(|c| self.find_insert_io_parent(c))
            .unwrap_or(self.topo.root())
    }

    /// The locality of the range `r` alone, under `parent`.
    fn range_locality(&self, r: &BusRange, parent: ObjId) -> Locality {
        Locality {
            domain: r.domain,
            bus_min: r.min.min(255) as u8,
            bus_max: r.max.min(255) as u8,
            parent,
            cpuset: self.topo.obj(parent).cpuset.clone().unwrap_or_default(),
        }
    }

    /// The object where I/O near `cpuset` goes: the largest object with
    /// exactly those PUs, or a new I/O Group of them.
    pub(crate) fn find_insert_io_parent(&mut self, cpuset: &CpuSet) -> Option<ObjId> {
        let root = self.topo.root();
        let cset = cpuset & self.topo.complete_cpuset();
        if cset.is_empty() {
            return None;
        }
        let mut cur = root;
        let set_of = |t: &wloc_core::Topology, id: ObjId| -> CpuSet {
            let o = t.obj(id);
            o.complete_cpuset
                .clone()
                .or_else(|| o.cpuset.clone())
                .unwrap_or_default()
        };
        if set_of(&self.topo, root) != cset {
            'down: loop {
                for &c in self.topo.obj(cur).children() {
                    let cs = set_of(&self.topo, c);
                    if cs == cset {
                        cur = c;
                        break 'down;
                    }
                    if !cs.is_empty() && cs.includes(&cset) {
                        cur = c;
                        continue 'down;
                    }
                }
                break;
            }
        }
        if set_of(&self.topo, cur) == cset || !self.keeps(ObjType::Group) {
            return Some(cur);
        }
        let allowed = self.topo.obj(root).cpuset.clone().unwrap_or_default();
        let mut g = group(None, &cset & &allowed, None, group_kind::IO, 0, false);
        g.complete_cpuset = Some(cset);
        match self.topo.insert_by_cpuset(g) {
            Ok(Some(Inserted::New(id))) | Ok(Some(Inserted::Merged(id))) => Some(id),
            _ => Some(cur),
        }
    }

    /// Discovers PCI functions and attaches them near their CPUs.
    pub(crate) fn look_pci(&mut self) {
        let tree = self.read_pci_tree();
        if let Some(s) = &self.opts.pci_locality {
            self.pci_forced = parse_forced(s);
        }
        let has_forced = self.opts.pci_locality.is_some();
        if tree.is_empty() && self.pci_forced.is_empty() {
            return;
        }
        let tree = if self.keeps(ObjType::Bridge) {
            Self::add_hostbridges(&mut self.topo, tree)
        } else {
            tree
        };
        let quirk = !has_forced
            && self.topo.obj(self.topo.root()).info("DMIBoardName") == Some("HPE CRAY EX235A");

        // The bus range below each top object, and the CPUs near it.
        let root_cpuset = self
            .topo
            .obj(self.topo.root())
            .cpuset
            .clone()
            .unwrap_or_default();
        let mut os_ranges: Vec<BusRange> = Vec::with_capacity(tree.len());
        for top in &tree {
            let pci = if top.host {
                top.children.first().unwrap_or(top)
            } else {
                top
            };
            let (domain, min, max) = match top.down {
                Some((d, sec, sub)) => (d, sec as u32, sub as u32),
                None => (top.domain, top.bus as u32, top.bus as u32),
            };
            let cpuset = self
                .os_bus_cpuset(pci.domain, pci.bus, pci.dev, pci.func, quirk)
                .unwrap_or_else(|| root_cpuset.clone());
            os_ranges.push(BusRange {
                domain,
                min,
                max,
                cpuset: Some(cpuset),
            });
        }

        let mut localities: Vec<Locality> = Vec::new();
        if has_forced {
            // Each forced range absorbs the ranges it overlaps, and those it
            // touches with the same CPUs; then every range gets a parent,
            // even one without any device.
            let mut merged: Vec<BusRange> = Vec::new();
            for r in os_ranges {
                if let Some(last) = merged.last_mut()
                    && last.domain == r.domain
                    && last.cpuset == r.cpuset
                    && (r.min == last.max || r.min == last.max + 1)
                {
                    last.max = last.max.max(r.max);
                    continue;
                }
                merged.push(r);
            }
            for r in merge_forced(merged, &self.pci_forced) {
                let parent = self.range_parent(&r);
                localities.push(self.range_locality(&r, parent));
            }
        } else {
            // hwloc's order: a parent per top object, and consecutive buses
            // with the same parent share a locality.
            for r in os_ranges {
                let parent = self.range_parent(&r);
                if let Some(last) = localities.last_mut()
                    && last.parent == parent
                    && last.domain == r.domain
                    && (r.min == last.bus_max as u32 || r.min == last.bus_max as u32 + 1)
                {
                    last.bus_max = r.max.min(255) as u8;
                    continue;
                }
                localities.push(self.range_locality(&r, parent));
            }
        }
        for top in tree {
            let (domain, bus) = match top.down {
                Some((d, sec, _)) => (d, sec),
                None => (top.domain, top.bus),
            };
            let parent = localities
                .iter()
                .find(|l| l.domain == domain && l.bus_min <= bus && bus <= l.bus_max)
                .map(|l| l.parent)
                .unwrap_or(self.topo.root());
            self.insert_pci_subtree(parent, top, 0);
        }
        self.topo.pci_localities = localities
            .iter()
            .map(|l| PciLocality {
                domain: l.domain,
                bus_min: l.bus_min,
                bus_max: l.bus_max,
                cpuset: l.cpuset.clone(),
            })
            .collect();
        self.pci_localities = localities;
    }

    fn insert_pci_subtree(&mut self, parent: ObjId, node: PciNode, depth: u32) {
        if depth > 256 {
            return;
        }
        // A refused object (past the tree's depth limit) takes its
        // subtree with it.
        let Ok(id) = self.topo.insert_by_parent(parent, node.obj) else {
            return;
        };
        for c in node.children {
            self.insert_pci_subtree(id, c, depth + 1);
        }
    }

    /// The PCI object with this bus id, or the smallest bridge or I/O
    /// parent covering its bus (hwloc's `hwloc_pci_find_parent_by_busid`).
    pub(crate) fn pci_parent_by_busid(
        &self,
        domain: u32,
        bus: u8,
        dev: u8,
        func: u8,
    ) -> Option<ObjId> {
        let start = self
            .pci_localities
            .iter()
            .find(|l| l.domain == domain && l.bus_min <= bus && bus <= l.bus_max)
            .map(|l| l.parent)
            .unwrap_or(self.topo.root());
        let found = self.pci_find_below(start, domain, bus, dev, func, 0);
        if found != self.topo.root() {
            return Some(found);
        }
        // No such device: attach near the bus's CPUs, as hwloc does.
        None
    }

    fn pci_find_below(
        &self,
        parent: ObjId,
        domain: u32,
        bus: u8,
        dev: u8,
        func: u8,
        depth: u32,
    ) -> ObjId {
        if depth > 256 {
            return parent;
        }
        for &c in self.topo.obj(parent).io_children() {
            let o = self.topo.obj(c);
            if let Some(p) = o.pci() {
                if (p.domain, p.bus, p.dev, p.func) == (domain, bus, dev, func) {
                    return c;
                }
                if p.domain > domain || (p.domain == domain && p.bus > bus) {
                    return parent;
                }
                if let Some(b) = o.bridge()
                    && b.domain == domain
                    && b.secondary_bus <= bus
                    && b.subordinate_bus >= bus
                {
                    return self.pci_find_below(c, domain, bus, dev, func, depth + 1);
                }
            } else if let Some(b) = o.bridge()
                && b.domain == domain
                && b.secondary_bus <= bus
                && b.subordinate_bus >= bus
            {
                return self.pci_find_below(c, domain, bus, dev, func, depth + 1);
            }
        }
        parent
    }

    /// `PCISlot` infos from `/sys/bus/pci/slots/*/address`.
    pub(crate) fn look_pci_slots(&mut self) {
        let Some(mut slots) = self.fs.list("/sys/bus/pci/slots") else {
            return;
        };
        slots.sort();
        slots.truncate(4096);
        for slot in slots {
            if slot.starts_with('.') {
                continue;
            }
            let Some(addr) = self.read(&format!("/sys/bus/pci/slots/{slot}/address")) else {
                continue;
            };
            let t = parse::text(&addr[..addr.len().min(63)]);
            let mut parts = t.trim().split(':');
            let (Some(d), Some(b), Some(v), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let hex = |s: &str| parse::strtoul(s, 16).map(|x| x.0);
            let (Some(domain), Some(bus), Some(dev)) = (hex(d), hex(b), hex(v)) else {
                continue;
            };
            if domain > u32::MAX as u64 || bus > 255 || dev > 31 {
                continue;
            }
            let (domain, bus, dev) = (domain as u32, bus as u8, dev as u8);
            let Some(first) = self.pci_parent_by_busid(domain, bus, dev, 0) else {
                continue;
            };
            // The function itself and its siblings on the same device.
            let Some(parent) = self.topo.obj(first).parent() else {
                continue;
            };
            let siblings: Vec<ObjId> = self.topo.obj(parent).io_children().to_vec();
            let start = siblings.iter().position(|&s| s == first).unwrap_or(0);
            for &s in &siblings[start..] {
                let o = self.topo.obj(s);
                let ok = match o.obj_type {
                    ObjType::PCIDevice => true,
                    ObjType::Bridge => o.pci().is_some(),
                    _ => false,
                };
                if !ok {
                    break;
                }
                let p = o.pci().cloned().unwrap_or_default();
                if p.domain != domain || p.bus != bus || p.dev != dev {
                    break;
                }
                self.topo.obj_mut(s).add_info("PCISlot", &slot);
            }
        }
    }
}

/// Merges forced localities into the OS ones: a forced range absorbs the
/// OS ranges it overlaps, and those it touches with the same CPUs; the
/// forced CPUs win.  Ranges come back sorted by domain and bus.
fn merge_forced(mut ranges: Vec<BusRange>, forced: &[Forced]) -> Vec<BusRange> {
    for f in forced {
        let mut new = BusRange {
            domain: f.domain,
            min: f.bus_first,
            max: f.bus_last.max(f.bus_first),
            cpuset: Some(f.cpuset.clone()),
        };
        let mut i = 0;
        while i < ranges.len() {
            let r = &ranges[i];
            let overlaps = r.domain == new.domain && r.min <= new.max && new.min <= r.max;
            let touches = r.domain == new.domain
                && (r.max + 1 == new.min || new.max + 1 == r.min)
                && r.cpuset == new.cpuset;
            if overlaps || touches {
                new.min = new.min.min(r.min);
                new.max = new.max.max(r.max);
                ranges.remove(i);
            } else {
                i += 1;
            }
        }
        ranges.push(new);
    }
    ranges.sort_by_key(|r| (r.domain, r.min));
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_localities_parse() {
        let f =
            parse_forced("0000:0a-0b 0x11,11111111;0000:44 0x8800\n0001 0xf;garbage;0000:zz 0x1");
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[0].domain, f[0].bus_first, f[0].bus_last),
            (0, 0x0a, 0x0b)
        );
        assert_eq!(f[0].cpuset.to_string(), "0x00000011,0x11111111");
        assert_eq!((f[1].bus_first, f[1].bus_last), (0x44, 0x44));
        assert_eq!((f[2].domain, f[2].bus_first, f[2].bus_last), (1, 0, 255));
    }

    #[test]
    fn link_speeds() {
        assert!((link_speed_from_string("8.0 GT/s PCIe\n") - 7.877).abs() < 0.01);
        assert!((link_speed_from_string("2.5 GT/s") - 2.0).abs() < 0.01);
        assert_eq!(link_speed_from_string("Unknown"), 0.0);
        let mut config = [0u8; 256];
        config[0x06] = 0x10;
        config[0x34] = 0x40;
        config[0x40] = 0x10;
        config[0x41] = 0x40; // loops on itself
        config[0x40 + 0x12] = 0x43; // gen3 x4
        assert_eq!(find_cap(&config, 0x10), 0x40);
        assert!((config_link_speed(&config, 0x40) - 3.938).abs() < 0.01);
        assert_eq!(find_cap(&config, 0x11), 0);
    }

    #[test]
    fn forced_ranges_merge() {
        let os = |min, max, c: Option<u32>| BusRange {
            domain: 0,
            min,
            max,
            cpuset: c.map(CpuSet::from_index),
        };
        let ranges = vec![
            os(0, 9, Some(0)),
            os(0x40, 0x43, Some(1)),
            os(0x80, 0x86, Some(2)),
            os(0xc0, 0xc6, Some(3)),
        ];
        let forced = parse_forced("0000:0a-0b 0x1;0000:3f-40 0x10;0000:7e 0x4;0000:82-c0 0x8");
        let m = merge_forced(ranges, &forced);
        let got: Vec<(u32, u32)> = m.iter().map(|r| (r.min, r.max)).collect();
        assert_eq!(
            got,
            vec![(0, 0xb), (0x3f, 0x43), (0x7e, 0x7e), (0x80, 0xc6)]
        );
    }
}
