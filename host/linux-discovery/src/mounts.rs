//! The mount table (`/proc/self/mounts`, `/proc/mounts`): where each
//! filesystem is mounted.  Discovery finds the cgroup and cpuset
//! hierarchies there, as hwloc does, and the host grants the Linux
//! component read access to the mount points it names.

/// Most lines read from a mount table.
pub const MAX_LINES: usize = 100_000;

/// One line of the mount table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount<'a> {
    /// Where it is mounted, with the table's octal escapes decoded.
    pub dir: String,
    /// The filesystem type (`cgroup2`, `cgroup`, `cpuset`, ...).
    pub fstype: &'a str,
    /// The mount options, comma-separated.
    pub options: &'a str,
}

/// Decodes the octal escapes of the mount table (`\040` for a space, ...).
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mounts a table lists, in its order; malformed lines are skipped.
pub fn parse(table: &str) -> impl Iterator<Item = Mount<'_>> {
    table.lines().take(MAX_LINES).filter_map(|line| {
        let mut f = line.split_ascii_whitespace();
        let (_dev, dir, fstype, options) = (f.next()?, f.next()?, f.next()?, f.next()?);
        Some(Mount {
            dir: unescape(dir),
            fstype,
            options,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_lines() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/a\\04"), "/a\\04");
        assert_eq!(unescape("\\"), "\\");
        let t = "cgroup2 /cgroup/uni\\040fied cgroup2 rw,nosuid 0 0\nbroken line\nproc /proc proc rw 0 0\n";
        let m: Vec<Mount> = parse(t).collect();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dir, "/cgroup/uni fied");
        assert_eq!((m[0].fstype, m[0].options), ("cgroup2", "rw,nosuid"));
        assert_eq!(m[1].dir, "/proc");
    }
}
