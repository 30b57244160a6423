//! OS devices: block devices, DAX devices, network interfaces, InfiniBand
//! HCAs, vector engines, BXI and Slingshot NICs, CXL memory devices, DRM
//! GPUs and DMA channels, each attached to its PCI device or near its CPUs.

use wloc_core::object::{Info, ObjKind, OsDevTypes};
use wloc_core::{CpuSet, ObjAttr, ObjId, ObjType, Object, TypeFilter};

use crate::ctx::{Ctx, truncate};
use crate::parse;

/// Report devices below `/virtual/` too.
const FIND_VIRTUAL: u32 = 1 << 0;
/// Report devices below USB controllers.
const FIND_USB: u32 = 1 << 1;
/// The device is a bus device (not a class one): `numa_node` is in its own
/// directory, or in its parent's for DAX.
const UNDER_BUS: u32 = 1 << 2;
const USE_PARENT_ATTRS: u32 = 1 << 3;

/// Most devices considered per class.
const MAX_DEVICES: usize = 1 << 14;

fn push(infos: &mut Vec<Info>, name: &str, value: &str) {
    infos.push(Info {
        name: name.into(),
        value: value.into(),
    });
}

/// Joins a relative link target to the link's directory, resolving `..`
/// lexically (sysfs links are relative and never go through other links
/// that matter here).
fn resolve_relative(link_path: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        let mut p: Vec<&str> = link_path.split('/').filter(|c| !c.is_empty()).collect();
        p.pop();
        p
    };
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                p_pop(&mut parts)?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

fn p_pop(parts: &mut Vec<&str>) -> Option<()> {
    parts.pop().map(|_| ())
}

/// The PCI bus id at the end of the `/pciDDDD:BB/...` chain of a sysfs
/// device path, if any.
fn last_pci_busid(path: &str) -> Option<(u32, u8, u8, u8)> {
    let start = path.find("/pci")?;
    let rest = &path[start + 4..];
    let slash = rest.find('/')?;
    let mut found = None;
    for comp in rest[slash + 1..].split('/') {
        match parse::pci_busid(comp) {
            Some(b) => found = Some(b),
            None => break,
        }
    }
    found
}

impl Ctx<'_> {
    /// The object where I/O near a PCI bus goes when the device itself is
    /// not in the tree.
    fn busid_parent(&mut self, domain: u32, bus: u8, dev: u8, func: u8) -> ObjId {
        let root = self.topo.root();
        let mut cpuset: Option<CpuSet> = None;
        if self.opts.pci_locality.is_some() {
            cpuset = self
                .pci_forced
                .iter()
                .find(|f| {
                    f.domain == domain && f.bus_first <= bus as u32 && bus as u32 <= f.bus_last
                })
                .map(|f| f.cpuset.clone());
        }
        if cpuset.is_none() {
            cpuset = self
                .read_cpumask(&format!(
                    "/sys/bus/pci/devices/{domain:04x}:{bus:02x}:{dev:02x}.{func:01x}/local_cpus"
                ))
                .filter(|s| !s.is_empty());
        }
        let cpuset =
            cpuset.unwrap_or_else(|| self.topo.obj(root).cpuset.clone().unwrap_or_default());
        self.find_insert_io_parent(&cpuset).unwrap_or(root)
    }

    fn osdev_numa_parent(&self, osdevpath: &str, flags: u32) -> Option<ObjId> {
        let read_node = |p: &str| -> Option<u32> {
            let v = self.read_int(p)?;
            u32::try_from(v).ok()
        };
        let node = if flags & UNDER_BUS == 0 {
            read_node(&format!("{osdevpath}/device/numa_node"))
        } else {
            read_node(&format!("{osdevpath}/numa_node")).or_else(|| {
                if flags & USE_PARENT_ATTRS == 0 {
                    return None;
                }
                let target = self.fs.read_link(osdevpath)?;
                let real = resolve_relative(osdevpath, &target)?;
                let parent = real.rsplit_once('/')?.0.to_string();
                read_node(&format!("{parent}/numa_node"))
            })
        }?;
        let mut id = self.numa_node(node)?;
        let mut guard = 0;
        while self.topo.obj(id).kind() == ObjKind::Memory && guard < 64 {
            id = self.topo.obj(id).parent()?;
            guard += 1;
        }
        Some(id)
    }

    /// Where an OS device goes: below its PCI device, near its NUMA node,
    /// or at the root; `None` for virtual and (unless asked) USB devices.
    fn find_osdev_parent(&mut self, osdevpath: &str, flags: u32) -> Option<ObjId> {
        let link = self
            .fs
            .read_link(osdevpath)
            .or_else(|| self.fs.read_link(&format!("{osdevpath}/device")))?;
        if flags & FIND_VIRTUAL == 0 && link.contains("/virtual/") {
            return None;
        }
        if flags & FIND_USB == 0 && link.contains("/usb") {
            return None;
        }
        if let Some((d, b, v, f)) = last_pci_busid(&link) {
            if let Some(p) = self.pci_parent_by_busid(d, b, v, f) {
                return Some(p);
            }
            return Some(self.busid_parent(d, b, v, f));
        }
        if let Some(p) = self.osdev_numa_parent(osdevpath, flags) {
            return Some(p);
        }
        Some(self.topo.root())
    }

    fn add_osdev(
        &mut self,
        parent: ObjId,
        types: u32,
        name: &str,
        subtype: Option<String>,
        infos: Vec<Info>,
    ) {
        let mut o = Object::new(ObjType::OSDevice, None);
        o.name = Some(name.to_string());
        o.attr = ObjAttr::OsDev(OsDevTypes(types));
        o.subtype = subtype;
        o.infos = infos;
        // Refused only under a parent that cannot hold I/O or past the
        // depth limit: the device is then left out.
        let _ = self.topo.insert_by_parent(parent, o);
    }

    /// The entries of a device class folder, in the order hwloc meets
    /// them (`readdir`, as far as it is known: see
    /// [`Ctx::readdir_order`]); OS devices of one parent keep that order,
    /// and gp indexes are taken in it.
    fn class_entries(&self, dir: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .list(dir)
            .into_iter()
            .filter(|n| n != "." && n != ".." && !n.contains('/'))
            .collect();
        v.sort();
        v.truncate(MAX_DEVICES);
        self.readdir_order(dir, &mut v);
        v
    }

    pub(crate) fn look_osdevs(&mut self) {
        let mut flags = 0;
        if self.opts.virtual_osdev {
            flags |= FIND_VIRTUAL;
        }
        if self.filter(ObjType::OSDevice) == TypeFilter::KeepAll {
            flags |= FIND_USB;
        }
        self.block_class(flags);
        self.dax_class(flags);
        self.net_class(flags);
        self.infiniband_class(flags);
        self.ve_class(flags);
        self.bxi_class(flags);
        self.cxi_class(flags);
        self.cxlmem(flags);
        if self.filter(ObjType::OSDevice) != TypeFilter::KeepImportant {
            self.simple_class("/sys/class/drm", OsDevTypes::GPU, flags, true);
            self.simple_class("/sys/class/dma", OsDevTypes::DMA, flags, false);
        }
    }

    fn block_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/block") {
            let path = format!("/sys/class/block/{name}");
            if self.fs.exists(&format!("{path}/partition")) {
                continue;
            }
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let (subtype, infos) = self.block_infos(&name, &path);
            self.add_osdev(parent, OsDevTypes::STORAGE, &name, subtype, infos);
        }
    }

    fn block_infos(&self, name: &str, path: &str) -> (Option<String>, Vec<Info>) {
        let mut infos = Vec::new();
        if let Some(l) = self.read_line(&format!("{path}/size")) {
            let v = parse::strtoul(&l, 10).map(|x| x.0).unwrap_or(0);
            push(&mut infos, "Size", &format!("{}KiB", v / 2));
        }
        let sector = self
            .read_line(&format!("{path}/queue/hw_sector_size"))
            .and_then(|l| parse::strtoul(&l, 10).map(|x| x.0))
            .unwrap_or(0);
        if sector != 0 {
            push(&mut infos, "SectorSize", &sector.to_string());
        }
        let is_nvm = self
            .read_line(&format!("{path}/device/devtype"))
            .is_some_and(|l| l.starts_with("nd_"));
        let (mut vendor, mut model, mut revision, mut serial, mut blocktype) = (
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        );
        if let Some(dev) = self.read_line(&format!("{path}/dev")) {
            let dev = truncate(&dev, 127);
            let mut mm = dev.split(':');
            let major = mm.next().and_then(|m| parse::strtoul(m, 10));
            let minor = mm.next().and_then(|m| parse::strtoul(m, 10));
            if let (Some((ma, _)), Some((mi, _))) = (major, minor) {
                push(&mut infos, "LinuxDeviceID", &dev);
                if let Some(t) = self.read_text(&format!("/run/udev/data/b{ma}:{mi}")) {
                    for line in t.lines().take(10_000) {
                        let line = truncate(line, 127);
                        let val = |p: &str| line.strip_prefix(p).map(|v| truncate(v, 63));
                        if let Some(v) = val("E:ID_VENDOR=") {
                            vendor = v;
                        } else if let Some(v) = val("E:ID_MODEL=") {
                            model = v;
                        } else if let Some(v) = val("E:ID_REVISION=") {
                            revision = v;
                        } else if let Some(v) = val("E:ID_SERIAL_SHORT=") {
                            serial = v;
                        } else if let Some(v) = val("E:ID_TYPE=") {
                            blocktype = v;
                        }
                    }
                }
            }
        }
        if vendor.eq_ignore_ascii_case("ATA") {
            vendor.clear();
        }
        if vendor.is_empty() {
            let m = model.to_ascii_lowercase();
            vendor = if m.starts_with("wd") {
                "Western Digital"
            } else if m.starts_with("st") {
                "Seagate"
            } else if m.starts_with("samsung") {
                "Samsung"
            } else if m.starts_with("sandisk") {
                "SanDisk"
            } else if m.starts_with("toshiba") {
                "Toshiba"
            } else {
                ""
            }
            .to_string();
        }
        for (k, v) in [
            ("Vendor", &vendor),
            ("Model", &model),
            ("Revision", &revision),
            ("SerialNumber", &serial),
        ] {
            if !v.is_empty() {
                push(&mut infos, k, v);
            }
        }
        let subtype = if is_nvm {
            Some("NVM")
        } else if blocktype == "disk" || name.starts_with("nvme") {
            Some("Disk")
        } else if blocktype == "tape" {
            Some("Tape")
        } else if blocktype == "cd" || blocktype == "floppy" || blocktype == "optical" {
            Some("Removable Media Device")
        } else {
            None
        };
        (subtype.map(|s| s.to_string()), infos)
    }

    fn dax_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/bus/dax/devices") {
            if self.dax_is_kmem(&name) {
                continue;
            }
            let path = format!("/sys/bus/dax/devices/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags | UNDER_BUS | USE_PARENT_ATTRS)
            else {
                continue;
            };
            let mut types = OsDevTypes::MEMORY;
            let mut infos = Vec::new();
            self.annotate_dax_parent(&mut infos, &name, Some(&mut types));
            if let Some(l) = self.read_line(&format!("{path}/size")) {
                let v = parse::strtoul(&l, 10).map(|x| x.0).unwrap_or(0);
                push(&mut infos, "Size", &format!("{}KiB", v >> 10));
            }
            if let Some(dev) = self.read_line(&format!("{path}/dev")) {
                let dev = truncate(&dev, 127);
                let mut mm = dev.split(':');
                if mm.next().and_then(|m| parse::strtoul(m, 10)).is_some()
                    && mm.next().and_then(|m| parse::strtoul(m, 10)).is_some()
                {
                    push(&mut infos, "LinuxDeviceID", &dev);
                }
            }
            let subtype = infos
                .iter()
                .find(|i| i.name == "DAXType")
                .map(|i| i.value.clone());
            self.add_osdev(parent, types, &name, subtype, infos);
        }
    }

    fn net_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/net") {
            let path = format!("/sys/class/net/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let mut infos = Vec::new();
            let mut subtype = None;
            if let Some(a) = self.read_line(&format!("{path}/address")) {
                push(&mut infos, "Address", &truncate(&a, 127));
            }
            if self.fs.exists(&format!("{path}/device/infiniband")) {
                let id = self
                    .read_text(&format!("{path}/dev_port"))
                    .or_else(|| self.read_text(&format!("{path}/dev_id")));
                if let Some(id) = id
                    && let Some((port, _)) = parse::strtoul(&truncate(&id, 15), 0)
                {
                    push(&mut infos, "Port", &(port.wrapping_add(1)).to_string());
                }
            }
            if name.starts_with("hs") && self.fs.list(&format!("{path}/device/cxi")).is_some() {
                subtype = Some("Slingshot".to_string());
            }
            self.add_osdev(parent, OsDevTypes::NETWORK, &name, subtype, infos);
        }
    }

    fn infiniband_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/infiniband") {
            if name.starts_with("scif") {
                continue;
            }
            let path = format!("/sys/class/infiniband/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let mut infos = Vec::new();
            let keep = |s: &str, allowed: &str| -> String {
                s.chars().take_while(|c| allowed.contains(*c)).collect()
            };
            for (file, info) in [
                ("node_guid", "NodeGUID"),
                ("sys_image_guid", "SysImageGUID"),
            ] {
                if let Some(v) = self.read_text(&format!("{path}/{file}")) {
                    push(
                        &mut infos,
                        info,
                        &keep(&truncate(&v, 19), "0123456789abcdefx:"),
                    );
                }
            }
            for i in 1..=256u32 {
                let port = format!("{path}/ports/{i}");
                let Some(state) = self.read_text(&format!("{port}/state")) else {
                    break;
                };
                let first: String = state.chars().take(1).collect();
                push(&mut infos, &format!("Port{i}State"), &first);
                if let Some(lid) = self.read_text(&format!("{port}/lid")) {
                    push(
                        &mut infos,
                        &format!("Port{i}LID"),
                        &keep(&truncate(&lid, 10), "0123456789abcdefx"),
                    );
                }
                if let Some(lmc) = self.read_text(&format!("{port}/lid_mask_count")) {
                    push(
                        &mut infos,
                        &format!("Port{i}LMC"),
                        &keep(&truncate(&lmc, 10), "0123456789"),
                    );
                }
                for j in 0..1024u32 {
                    let Some(gid) = self.read_text(&format!("{port}/gids/{j}")) else {
                        break;
                    };
                    let gid = keep(&truncate(&gid, 39), "0123456789abcdefx:");
                    if gid.get(20..39) != Some("0000:0000:0000:0000") {
                        push(&mut infos, &format!("Port{i}GID{j}"), &gid);
                    }
                }
            }
            self.add_osdev(
                parent,
                OsDevTypes::NETWORK | OsDevTypes::OPENFABRICS,
                &name,
                None,
                infos,
            );
        }
    }

    fn ve_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/ve") {
            let path = format!("/sys/class/ve/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let mut infos = Vec::new();
            let line = |f: &str| {
                self.read_line(&format!("{path}/{f}"))
                    .map(|l| truncate(&l, 63))
            };
            let digits =
                |s: String| -> String { s.chars().take_while(|c| c.is_ascii_digit()).collect() };
            if let Some(v) = line("model") {
                push(&mut infos, "VectorEngineModel", &v);
            }
            if let Some(v) = line("serial") {
                push(&mut infos, "VectorEngineSerialNumber", &v);
            }
            if line("partitioning_mode").is_some_and(|v| parse::atoi(&v) > 0) {
                push(&mut infos, "VectorEngineNUMAPartitioned", "1");
            }
            if let Some(v) = line("num_of_core") {
                push(&mut infos, "VectorEngineCores", &digits(v));
            }
            if let Some(v) = self.read_uint(&format!("{path}/memory_size")) {
                push(
                    &mut infos,
                    "VectorEngineMemorySize",
                    &format!("{}KiB", v as u64 * 1024 * 1024),
                );
            }
            for (f, n) in [
                ("cache_llc", "VectorEngineLLCSize"),
                ("cache_l2", "VectorEngineL2Size"),
                ("cache_l1d", "VectorEngineL1dSize"),
                ("cache_l1i", "VectorEngineL1iSize"),
            ] {
                if let Some(v) = line(f) {
                    push(&mut infos, n, &format!("{}KiB", digits(v)));
                }
            }
            self.add_osdev(
                parent,
                OsDevTypes::COPROC,
                &name,
                Some("VectorEngine".into()),
                infos,
            );
        }
    }

    fn bxi_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/bxi") {
            let path = format!("/sys/class/bxi/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let mut infos = Vec::new();
            if let Some(v) = self.read_line(&format!("{path}/uuid")) {
                push(&mut infos, "BXIUUID", &truncate(&v, 63));
            }
            self.add_osdev(
                parent,
                OsDevTypes::NETWORK,
                &name,
                Some("BXI".into()),
                infos,
            );
        }
    }

    fn cxi_class(&mut self, flags: u32) {
        for name in self.class_entries("/sys/class/cxi") {
            let path = format!("/sys/class/cxi/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            let mut infos = Vec::new();
            for (f, n) in [("cassini_version", "CassiniVersion"), ("nid", "NID")] {
                if let Some(v) = self.read_line(&format!("{path}/device/properties/{f}")) {
                    push(&mut infos, n, &truncate(&v, 63));
                }
            }
            self.add_osdev(
                parent,
                OsDevTypes::NETWORK,
                &name,
                Some("Slingshot".into()),
                infos,
            );
        }
    }

    fn cxlmem(&mut self, flags: u32) {
        for name in self.class_entries("/sys/bus/cxl/devices") {
            if !name.starts_with("mem") {
                continue;
            }
            let path = format!("/sys/bus/cxl/devices/{name}");
            let Some(parent) = self.find_osdev_parent(&path, flags | UNDER_BUS | USE_PARENT_ATTRS)
            else {
                continue;
            };
            let mut types = OsDevTypes::MEMORY;
            let mut infos = Vec::new();
            if let Some(v) = self.read_line(&format!("{path}/ram/size")) {
                let v = parse::strtoul(&v, 0).map(|x| x.0).unwrap_or(0);
                if v != 0 {
                    push(&mut infos, "CXLRAMSize", &format!("{}KiB", v / 1024));
                }
            }
            if let Some(v) = self.read_line(&format!("{path}/pmem/size")) {
                let v = parse::strtoul(&v, 0).map(|x| x.0).unwrap_or(0);
                if v != 0 {
                    push(&mut infos, "CXLPMEMSize", &format!("{}KiB", v / 1024));
                }
                types |= OsDevTypes::STORAGE;
            }
            if let Some(v) = self.read_line(&format!("{path}/serial")) {
                push(&mut infos, "SerialNumber", &truncate(&v, 63));
            }
            self.add_osdev(parent, types, &name, Some("CXLMem".into()), infos);
        }
    }

    /// Classes whose devices carry no infos (DRM GPUs, DMA channels).
    fn simple_class(&mut self, dir: &str, types: u32, flags: u32, need_dev: bool) {
        for name in self.class_entries(dir) {
            let path = format!("{dir}/{name}");
            if need_dev && !self.fs.exists(&format!("{path}/dev")) {
                continue;
            }
            let Some(parent) = self.find_osdev_parent(&path, flags) else {
                continue;
            };
            self.add_osdev(parent, types, &name, None, Vec::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            last_pci_busid("../../devices/pci0000:00/0000:00:01.0/0000:02:00.0/net/eth0"),
            Some((0, 2, 0, 0))
        );
        assert_eq!(last_pci_busid("../../devices/virtual/net/lo"), None);
        assert_eq!(last_pci_busid("/pci0000:00"), None);
        assert_eq!(
            resolve_relative(
                "/sys/bus/dax/devices/dax0.0",
                "../../../devices/platform/hmem.0/dax0.0"
            )
            .as_deref(),
            Some("/sys/devices/platform/hmem.0/dax0.0")
        );
        assert_eq!(resolve_relative("/a", "../../x"), None);
    }
}
