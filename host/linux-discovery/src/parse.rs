//! Parsers for the small text formats of sysfs and procfs.
//!
//! Every parser here is total: it never panics, whatever bytes it gets, and
//! caps the sizes it builds so that a hostile file cannot make discovery
//! allocate without bound.

use wloc_core::bitmap::{Set, SetKind};

/// The largest CPU or NUMA node index accepted from a file (about a million).
/// Bigger indexes are ignored rather than turned into huge bitmaps.
pub const MAX_INDEX: u32 = (1 << 20) - 1;

/// The largest number of 32-bit words accepted in a kernel cpumask.
const MAX_MASK_WORDS: usize = (MAX_INDEX as usize + 1) / 32;

/// Lossy UTF-8 text of a file, without trailing NUL bytes.
pub fn text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The first line of a file, without its end of line (`strchr(s, '\n')`).
pub fn first_line(bytes: &[u8]) -> String {
    let t = text(bytes);
    match t.find('\n') {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// C's `strtoul(s, &end, base)` on a prefix of `s`: skips leading white
/// space, accepts an optional sign, a `0x` prefix for base 16 or 0 and a
/// leading `0` meaning octal for base 0.  Returns the value (saturated) and
/// the number of bytes consumed, or `None` when no digit was found.
pub fn strtoul(s: &str, base: u32) -> Option<(u64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || (b'\t'..=b'\r').contains(&b[i])) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut base = base;
    let has_hex_prefix = i + 1 < b.len()
        && b[i] == b'0'
        && (b[i + 1] == b'x' || b[i + 1] == b'X')
        && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit());
    if (base == 0 || base == 16) && has_hex_prefix {
        base = 16;
        i += 2;
    } else if base == 0 {
        base = if i < b.len() && b[i] == b'0' { 8 } else { 10 };
    }
    let start = i;
    let mut v: u64 = 0;
    while i < b.len() {
        let d = match (b[i] as char).to_digit(base) {
            Some(d) => d,
            None => break,
        };
        v = v.saturating_mul(base as u64).saturating_add(d as u64);
        i += 1;
    }
    if i == start {
        return None;
    }
    if neg {
        v = v.wrapping_neg();
    }
    Some((v, i))
}

/// C's `atoi`: decimal, optional sign, 0 when there is no number.
pub fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    if neg { -v } else { v }
}

/// hwloc's `hwloc_read_path_as_uint`: at most the first 10 bytes, any base.
/// A file without digits reads as 0.
pub fn as_uint(bytes: &[u8]) -> u32 {
    let t = text(&bytes[..bytes.len().min(10)]);
    strtoul(&t, 0).map(|(v, _)| v as u32).unwrap_or(0)
}

/// hwloc's `hwloc_read_path_as_uint64`: at most the first 21 bytes, any base.
pub fn as_u64(bytes: &[u8]) -> u64 {
    let t = text(&bytes[..bytes.len().min(21)]);
    strtoul(&t, 0).map(|(v, _)| v).unwrap_or(0)
}

/// hwloc's `hwloc_read_path_as_int`: at most the first 10 bytes, decimal.
pub fn as_int(bytes: &[u8]) -> i64 {
    atoi(&text(&bytes[..bytes.len().min(10)]))
}

/// An OS index read as an `int`: negative values (such as `-1`) and values
/// beyond `u32` mean "unknown".
pub fn os_index(bytes: &[u8]) -> Option<u32> {
    let v = as_int(bytes);
    if (0..=u32::MAX as i64 - 1).contains(&v) {
        Some(v as u32)
    } else {
        None
    }
}

/// Parses a kernel cpumask (`00000000,0000ffff`: 32-bit hex words, most
/// significant first).  Returns `None` when the file holds no mask at all.
pub fn cpumask<K: SetKind>(bytes: &[u8]) -> Option<Set<K>> {
    let t = text(bytes);
    let mut words32: Vec<u32> = Vec::new();
    let mut rest = t.as_str();
    let mut found = false;
    while let Some((v, used)) = strtoul(rest, 16) {
        found = true;
        let v = v as u32;
        let after = &rest[used..];
        match after.find(',') {
            None => {
                words32.push(v);
                break;
            }
            Some(c) => {
                // Leading empty words carry no information.
                if v != 0 || !words32.is_empty() {
                    words32.push(v);
                }
                rest = &after[c + 1..];
            }
        }
        if words32.len() > MAX_MASK_WORDS {
            return None;
        }
    }
    if !found {
        return None;
    }
    // words32 is most significant first.
    let n = words32.len();
    let mut words64 = vec![0u64; n.div_ceil(2)];
    for (i, w) in words32.iter().rev().enumerate() {
        words64[i / 2] |= (*w as u64) << ((i % 2) * 32);
    }
    Some(Set::from_words(&words64))
}

/// Parses a kernel cpulist (`0-3,8,10-11`).  Returns `None` when the text
/// holds no number; indexes beyond [`MAX_INDEX`] are dropped.
pub fn cpulist<K: SetKind>(bytes: &[u8]) -> Option<Set<K>> {
    let t = text(bytes);
    let t = t.trim();
    if t.is_empty() {
        return None;
    }
    let mut set = Set::new();
    let mut any = false;
    for part in t.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (a, used) = match strtoul(part, 0) {
            Some(x) => x,
            None => continue,
        };
        let rest = &part[used..];
        let b = match rest.strip_prefix('-') {
            Some(r) => strtoul(r, 0).map(|(v, _)| v).unwrap_or(a),
            None => a,
        };
        any = true;
        if a > MAX_INDEX as u64 || b < a {
            continue;
        }
        let b = b.min(MAX_INDEX as u64);
        set.set_range(a as u32, Some(b as u32));
    }
    if any { Some(set) } else { None }
}

/// `MemTotal: N kB` (or `Node X MemTotal: N kB`) from a meminfo file, in bytes.
pub fn meminfo_total(bytes: &[u8]) -> Option<u64> {
    meminfo_field(bytes, "MemTotal:").map(|kb| kb.saturating_mul(1024))
}

/// The number after `field` in a meminfo-like file (first 4 KiB only, as hwloc).
pub fn meminfo_field(bytes: &[u8], field: &str) -> Option<u64> {
    let t = text(&bytes[..bytes.len().min(4095)]);
    let i = t.find(field)?;
    strtoul(&t[i + field.len()..], 10).map(|(v, _)| v)
}

/// A PCI bus id `DDDD:BB:DD.F` (domain optional), as in sysfs device names.
pub fn pci_busid(s: &str) -> Option<(u32, u8, u8, u8)> {
    let (head, func) = s.rsplit_once('.')?;
    let mut parts: Vec<&str> = head.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let dev = parts.pop()?;
    let bus = parts.pop()?;
    let domain = parts.pop().unwrap_or("0");
    let hex = |s: &str, max: u64| -> Option<u64> {
        if s.is_empty() || s.len() > 8 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let v = u64::from_str_radix(s, 16).ok()?;
        (v <= max).then_some(v)
    };
    let func_digits: String = func.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    Some((
        hex(domain, u32::MAX as u64)? as u32,
        hex(bus, 0xff)? as u8,
        hex(dev, 0x1f)? as u8,
        hex(&func_digits, 0x7)? as u8,
    ))
}

/// The hash that orders the entries of a sysfs (kernfs) folder on a 64-bit
/// Linux kernel since 4.8 (`kernfs_name_hash` for a folder without
/// namespace): `readdir` returns entries by increasing hash, then name.
/// Programs that list sysfs in `readdir` order (hwloc) see this order.
pub fn kernfs_name_hash(name: &str) -> u32 {
    // init_name_hash(NULL), partial_name_hash per byte, end_name_hash
    // (hash_long(hash, 32) = hash_64: a multiplication by the golden ratio).
    const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
    let mut hash: u64 = 0;
    for c in name.bytes().map(u64::from) {
        hash = hash
            .wrapping_add(c << 4)
            .wrapping_add(c >> 4)
            .wrapping_mul(11);
    }
    let mut h = (hash.wrapping_mul(GOLDEN_RATIO_64) >> 32) as u32 & 0x7fff_ffff;
    // 0, 1 and INT_MAX are kept for the `.`, `..` and end markers.
    if h < 2 {
        h += 2;
    }
    if h >= 0x7fff_ffff {
        h = 0x7fff_fffe;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use wloc_core::CpuSet;

    #[test]
    fn strtoul_like_c() {
        assert_eq!(strtoul("  42K", 0), Some((42, 4)));
        assert_eq!(strtoul("0x1f,", 0), Some((31, 4)));
        assert_eq!(strtoul("010", 0), Some((8, 3)));
        assert_eq!(strtoul("ff", 16), Some((255, 2)));
        assert_eq!(strtoul("0x", 16), Some((0, 1)));
        assert_eq!(strtoul("zz", 0), None);
        assert_eq!(strtoul("", 10), None);
        assert_eq!(strtoul("99999999999999999999999", 10).unwrap().0, u64::MAX);
        assert_eq!(atoi(" -1\n"), -1);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(os_index(b"-1\n"), None);
        assert_eq!(os_index(b"7\n"), Some(7));
    }

    #[test]
    fn cpumasks() {
        let s: CpuSet = cpumask(b"00000000,0000ffff\n").unwrap();
        assert_eq!(s, CpuSet::from_range(0, Some(15)));
        let s: CpuSet = cpumask(b"00000001,00000000,00000003\n").unwrap();
        assert_eq!(s.to_list_string(), "0-1,64");
        let s: CpuSet = cpumask(b"0\n").unwrap();
        assert!(s.is_empty());
        assert!(cpumask::<wloc_core::bitmap::CpuKind>(b"").is_none());
        assert!(cpumask::<wloc_core::bitmap::CpuKind>(b"garbage").is_none());
        let s: CpuSet = cpumask(b"ffffffff,ffffffff").unwrap();
        assert_eq!(s.weight(), Some(64));
    }

    #[test]
    fn cpulists() {
        let s: CpuSet = cpulist(b"0-3,8,10-11\n").unwrap();
        assert_eq!(s.to_list_string(), "0-3,8,10-11");
        assert!(cpulist::<wloc_core::bitmap::CpuKind>(b"\n").is_none());
        let s: CpuSet = cpulist(b"0-4294967295").unwrap();
        assert_eq!(s.last(), Some(MAX_INDEX));
        let s: CpuSet = cpulist(b"5-2,7").unwrap();
        assert_eq!(s.to_list_string(), "7");
    }

    #[test]
    fn busids() {
        assert_eq!(pci_busid("0000:00:1f.3"), Some((0, 0, 0x1f, 3)));
        assert_eq!(pci_busid("10000:00:04.0"), Some((0x10000, 0, 4, 0)));
        assert_eq!(pci_busid("02:00.1"), Some((0, 2, 0, 1)));
        assert_eq!(pci_busid("0000:00:20.0"), None);
        assert_eq!(pci_busid("pci0000:00"), None);
        assert_eq!(meminfo_total(b"Node 0 MemTotal:  1024 kB\n"), Some(1 << 20));
    }

    #[test]
    fn kernfs_order() {
        // `ls -U /sys/bus/pci/devices` on a 64-bit Linux 6.18 machine.
        let seen = [
            "0000:00:01.0",
            "0000:00:04.0",
            "0000:00:00.0",
            "0000:00:03.0",
            "0000:00:02.0",
            "0000:00:05.0",
        ];
        let mut names: Vec<&str> = seen.to_vec();
        names.sort();
        names.sort_by_key(|n| kernfs_name_hash(n));
        assert_eq!(names, seen);
        assert_eq!(kernfs_name_hash("0000:00:01.0"), 378_092_441);
        assert!(kernfs_name_hash("") >= 2);
    }
}
