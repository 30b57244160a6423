//! wloc's built-in annotation component for PCI vendor and device names.
//!
//! It is granted the system's PCI ID database (`/usr/share/misc/pci.ids`,
//! from Debian's `pci.ids` package, or `/usr/share/hwdata/pci.ids`, from
//! `hwdata`) and sets the `PCIVendor` and `PCIDevice` infos of PCI devices
//! and PCI bridges, as hwloc does with libpciaccess:
//! * the vendor name is that of the first vendor line (`vvvv  Name`) with
//!   the device's vendor id; the device name that of the first device line
//!   (`<TAB>dddd  Name`) with its device id in that vendor's block;
//! * a name starts 2 characters after the id and, as libpciaccess reads
//!   lines into 128-byte buffers, ends at byte 127 of its line;
//! * an empty name is not set; subsystem names are not used.
//!
//! Only what is needed is parsed: lines are skipped by their first byte,
//! the blocks of vendors nobody asked for are not looked into, and the
//! scan stops once every wanted vendor was seen.

use std::collections::{BTreeMap, BTreeSet};

wit_bindgen::generate!({
    world: "annotation-backend",
    path: "../../wit/backend@0.1.0",
});

use wloc::backend::types::{Info, ObjectAttr};
use wloc::backend::{files, log, topology};

/// Where the database is looked for, in this order.
const PCI_IDS: [&str; 2] = ["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"];

/// Largest database read (the 2023 file is 1.3 MB).
const MAX_PCI_IDS_BYTES: u32 = 16 << 20;

/// Names found for the wanted ids.
#[derive(Debug, Default, PartialEq)]
pub struct Names {
    /// Vendor id -> name.
    pub vendors: BTreeMap<u16, String>,
    /// (vendor id, device id) -> name.
    pub devices: BTreeMap<(u16, u16), String>,
}

fn hex4(b: &[u8]) -> Option<u16> {
    if b.len() < 4 || !b[..4].iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let s = std::str::from_utf8(&b[..4]).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// The name of an entry line whose id starts at `tabs`: 2 characters after
/// the 4 digits, up to byte 127 of the line (libpciaccess's line buffer).
fn name_of(line: &[u8], tabs: usize) -> String {
    let end = line.len().min(127);
    let start = tabs + 6;
    if start >= end {
        return String::new();
    }
    String::from_utf8_lossy(&line[start..end]).into_owned()
}

/// Looks up the names of `wanted` (vendor id -> device ids) in a pci.ids
/// text.
pub fn lookup(text: &[u8], wanted: &BTreeMap<u16, BTreeSet<u16>>) -> Names {
    let mut names = Names::default();
    let mut pending: BTreeSet<u16> = wanted.keys().copied().collect();
    // The wanted vendor whose block is being read.
    let mut current: Option<u16> = None;
    // memchr finds line ends 16 bytes at a time (the components are built
    // with SIMD): pci.ids is 1.3 MB and Intel's block (8086), which most
    // machines have, comes near its end, so most of it is scanned.
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text).chain(core::iter::once(text.len()));
    for end in ends {
        let line = &text[start..end];
        start = end + 1;
        match line.first() {
            Some(b'\t') => {
                let Some(v) = current else { continue };
                // Device lines have one tab; subsystem lines two.
                if line.get(1) == Some(&b'\t') {
                    continue;
                }
                let Some(d) = hex4(&line[1..]) else { continue };
                if wanted[&v].contains(&d) && !names.devices.contains_key(&(v, d)) {
                    names.devices.insert((v, d), name_of(line, 1));
                }
            }
            Some(c) if c.is_ascii_hexdigit() => {
                let Some(v) = hex4(line) else { continue };
                current = None;
                if pending.remove(&v) {
                    names.vendors.insert(v, name_of(line, 0));
                    current = Some(v);
                } else if pending.is_empty() {
                    break;
                }
            }
            // Comments, class lines (`C xx`), blank lines.
            _ => {}
        }
    }
    names
}

struct Annotator;

impl Guest for Annotator {
    fn annotate() -> Result<Annotations, String> {
        let objects = topology::objects();
        let mut wanted: BTreeMap<u16, BTreeSet<u16>> = BTreeMap::new();
        let mut targets: Vec<(u64, u16, u16)> = Vec::new();
        for o in &objects {
            let ids = match &o.attr {
                ObjectAttr::Pci(p) => Some((p.vendor_id, p.device_id)),
                // Host bridges are not PCI devices and have no names.
                ObjectAttr::Bridge(b) => b.upstream.as_ref().map(|p| (p.vendor_id, p.device_id)),
                _ => None,
            };
            if let Some((v, d)) = ids {
                wanted.entry(v).or_default().insert(d);
                targets.push((u64::from(o.id), v, d));
            }
        }
        let mut out = Annotations {
            infos: Vec::new(),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: Vec::new(),
        };
        if targets.is_empty() {
            return Ok(out);
        }
        // One at a time, so that a machine with both databases reads only
        // the first (each is over a megabyte); the first one read is used.
        let Some(text) = PCI_IDS.iter().find_map(|p| {
            files::read_many(&[p.to_string()], MAX_PCI_IDS_BYTES)
                .pop()
                .and_then(Result::ok)
        }) else {
            log::log(
                log::Level::Debug,
                "no PCI ID database (pci.ids) was found; PCI devices keep numeric ids only",
            );
            return Ok(out);
        };
        let names = lookup(&text, &wanted);
        for (gp, v, d) in targets {
            if let Some(n) = names.vendors.get(&v).filter(|n| !n.is_empty()) {
                out.infos.push((
                    gp,
                    Info {
                        name: "PCIVendor".into(),
                        value: n.clone(),
                    },
                ));
            }
            if let Some(n) = names.devices.get(&(v, d)).filter(|n| !n.is_empty()) {
                out.infos.push((
                    gp,
                    Info {
                        name: "PCIDevice".into(),
                        value: n.clone(),
                    },
                ));
            }
        }
        Ok(out)
    }
}

export!(Annotator);

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &[u8] = b"# comment\n\
0001  SafeNet (wrong ID)\n\
1af4  Red Hat, Inc.\n\
\t1000  Virtio network device\n\
\t\t1af4 0001  Virtio network device (subsystem)\n\
\t1041  Virtio 1.0 network device\n\
1af5  Other\n\
\t1041  Not this one\n\
8086  Intel Corporation\n\
\t0d58  Ethernet Controller\n\
C 02  Network controller\n\
\t00  Ethernet controller\n";

    fn want(pairs: &[(u16, u16)]) -> BTreeMap<u16, BTreeSet<u16>> {
        let mut w: BTreeMap<u16, BTreeSet<u16>> = BTreeMap::new();
        for &(v, d) in pairs {
            w.entry(v).or_default().insert(d);
        }
        w
    }

    #[test]
    fn finds_vendor_and_device_names_in_their_block() {
        let n = lookup(IDS, &want(&[(0x1af4, 0x1041), (0x8086, 0x0d57)]));
        assert_eq!(n.vendors[&0x1af4], "Red Hat, Inc.");
        assert_eq!(n.devices[&(0x1af4, 0x1041)], "Virtio 1.0 network device");
        assert_eq!(n.vendors[&0x8086], "Intel Corporation");
        assert!(!n.devices.contains_key(&(0x8086, 0x0d57)));
    }

    #[test]
    fn names_are_cut_as_libpciaccess_cuts_them() {
        let long = format!("abcd  {}\n", "x".repeat(200));
        let n = lookup(long.as_bytes(), &want(&[(0xabcd, 1)]));
        assert_eq!(n.vendors[&0xabcd].len(), 121);
        let n = lookup(b"abcd\n", &want(&[(0xabcd, 1)]));
        assert_eq!(n.vendors[&0xabcd], "");
    }

    #[test]
    fn the_last_line_counts_without_a_newline() {
        let n = lookup(
            b"1af4  Red Hat, Inc.\n\t1041  Virtio",
            &want(&[(0x1af4, 0x1041)]),
        );
        assert_eq!(n.devices[&(0x1af4, 0x1041)], "Virtio");
        assert_eq!(lookup(b"", &want(&[(0x1af4, 1)])), Names::default());
    }

    #[test]
    fn unknown_vendors_give_nothing() {
        let n = lookup(IDS, &want(&[(0x9999, 1)]));
        assert_eq!(n, Names::default());
    }
}
