//! The sysfs/procfs text parsers (numbers as C reads them, cpumasks,
//! cpulists, meminfo fields, PCI bus ids) on arbitrary bytes: none may
//! panic, and what they return must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::bitmap::{CpuKind, NodeKind, Set};
use wloc_linux::parse;

fuzz_target!(|data: &[u8]| {
    let text = parse::text(data);
    assert!(!text.contains('\0'));
    let line = parse::first_line(data);
    assert!(!line.contains('\n') && text.starts_with(&line));
    for base in [0, 10, 16] {
        if let Some((_, used)) = parse::strtoul(&text, base) {
            assert!(used <= text.len() && text.is_char_boundary(used));
        }
    }
    let _ = parse::atoi(&text);
    let _ = parse::as_uint(data);
    let _ = parse::as_u64(data);
    let _ = parse::as_int(data);
    if let Some(i) = parse::os_index(data) {
        assert!(i < u32::MAX);
    }

    if let Some(set) = parse::cpulist::<NodeKind>(data) {
        // Indexes are capped, and the set reads back from its own list form.
        assert!(set.last().is_none_or(|l| l <= parse::MAX_INDEX));
        assert!(!set.is_infinite());
        let again: Set<NodeKind> =
            parse::cpulist(set.to_list_string().as_bytes()).unwrap_or_else(Set::new);
        assert!(set.is_empty() || again == set, "list round trip of {set:?}");
    }
    if let Some(set) = parse::cpumask::<CpuKind>(data) {
        assert!(!set.is_infinite());
        assert!(set.last().is_none_or(|l| l <= parse::MAX_INDEX + 32));
        // The kernel form: 32-bit words, most significant first.
        let words = set.bitmap().words();
        let mut w32: Vec<String> = Vec::new();
        for w in words.iter().rev() {
            w32.push(format!("{:08x}", w >> 32));
            w32.push(format!("{:08x}", w & 0xffff_ffff));
        }
        if w32.is_empty() {
            w32.push("0".into());
        }
        let again: Set<CpuKind> = parse::cpumask(w32.join(",").as_bytes()).expect("a mask");
        assert_eq!(again, set, "mask round trip");
    }

    let _ = parse::meminfo_total(data);
    let _ = parse::meminfo_field(data, "MemFree:");
    if let Some((_, _, dev, func)) = parse::pci_busid(&text) {
        assert!(dev <= 0x1f && func <= 7);
    }
});
