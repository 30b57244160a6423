//! The publication stamp: what a topology service saw when it discovered
//! the machine it publishes an image of, stored in the image's body (so
//! that it is checksummed with the topology and renamed into place with
//! it, one file).  An adopter compares it with the machine now (boot id,
//! CPUs and NUMA nodes online) before trusting the image.

use crate::ImageError;

/// The longest boot id accepted, in bytes (the kernel's is a 36-character
/// UUID).
pub const MAX_BOOT_ID_BYTES: usize = 64;

/// The longest online list accepted, in bytes: the kernel's list of the
/// largest set wloc reads ([`wloc_core::bitmap::MAX_SET_BITS`] bits, every
/// other one online: `0,2,4,...`) is about 7 MB, but real machines write a
/// few ranges; 1 MiB keeps a hostile stamp from growing an adopter's
/// comparison without reason.
pub const MAX_ONLINE_LIST_BYTES: usize = 1 << 20;

/// What the publisher saw when it discovered (all text as the kernel
/// gives it, trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// 1, 2, ... per publication by this service run (starts above the
    /// old file's).
    pub generation: u64,
    /// `/sys/devices/system/cpu/online` (e.g. `0-3,6`).
    pub cpus_online: String,
    /// `/sys/devices/system/node/online` (`""` when absent).
    pub nodes_online: String,
}

impl Publication {
    /// Checks the stamp (see [`check`]): the writer refuses what readers
    /// would refuse.
    pub fn check(&self) -> Result<(), ImageError> {
        check(
            &self.boot_id,
            self.generation,
            &self.cpus_online,
            &self.nodes_online,
        )
    }
}

/// Whether `s` is a kernel list (`0-3,6,8-9`, or empty): ranges of
/// decimal numbers in increasing order, low before high, separated by
/// commas.
fn is_kernel_list(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let mut last: Option<u64> = None;
    for part in s.split(',') {
        let num = |t: &str| -> Option<u64> {
            (!t.is_empty() && t.len() <= 10 && t.bytes().all(|c| c.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a), num(b)),
            None => (num(part), num(part)),
        };
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return false;
        };
        if hi < lo || last.is_some_and(|l| lo <= l) {
            return false;
        }
        last = Some(hi);
    }
    true
}

/// The text of an error quoting `s` (at most [`crate::QUOTE_MAX`] bytes).
fn quoted(s: &str) -> String {
    format!("'{}'", crate::clip(&s.escape_debug().to_string()))
}

/// Checks a stamp's fields: a boot id of hex digits and dashes (at most
/// [`MAX_BOOT_ID_BYTES`]), a generation from 1, online lists in the
/// kernel's syntax (at most [`MAX_ONLINE_LIST_BYTES`] each).
pub(crate) fn check(
    boot_id: &str,
    generation: u64,
    cpus_online: &str,
    nodes_online: &str,
) -> Result<(), ImageError> {
    let bad = |m: String| Err(ImageError::Publication(m));
    if boot_id.is_empty() || boot_id.len() > MAX_BOOT_ID_BYTES {
        return bad(format!(
            "the boot id has {} bytes (1 to {MAX_BOOT_ID_BYTES} expected)",
            boot_id.len()
        ));
    }
    if !boot_id.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-') {
        return bad(format!(
            "the boot id {} is not hex digits and dashes",
            quoted(boot_id)
        ));
    }
    if generation == 0 {
        return bad("generation 0 (publications count from 1)".into());
    }
    for (what, list) in [
        ("CPUs online", cpus_online),
        ("NUMA nodes online", nodes_online),
    ] {
        if list.len() > MAX_ONLINE_LIST_BYTES {
            return bad(format!(
                "the list of {what} has {} bytes (at most {MAX_ONLINE_LIST_BYTES})",
                list.len()
            ));
        }
        if !is_kernel_list(list) {
            return bad(format!(
                "the list of {what} {} is not a kernel list such as 0-3,6",
                quoted(list)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp() -> Publication {
        Publication {
            boot_id: "6f1e0d4c-93a1-4a3e-8d0b-2c8f1f5e7a10".into(),
            generation: 1,
            cpus_online: "0-3,6".into(),
            nodes_online: "0".into(),
        }
    }

    #[test]
    fn kernel_lists() {
        for ok in ["", "0", "0-3", "0-3,6", "0,2,4-7,9", "1-1"] {
            assert!(is_kernel_list(ok), "{ok}");
        }
        for bad in [
            "0-",
            "-3",
            "3-1",
            "0,,1",
            "0-3,2",
            "1,1",
            "a",
            "0\n",
            " 0",
            "0-3 ",
            "0x3",
            "12345678901",
        ] {
            assert!(!is_kernel_list(bad), "{bad}");
        }
    }

    #[test]
    fn good_stamps_pass_and_bad_ones_say_why() {
        assert!(stamp().check().is_ok());
        let refused = |p: Publication| p.check().unwrap_err().to_string();
        let e = refused(Publication {
            boot_id: "x".repeat(65),
            ..stamp()
        });
        assert!(e.contains("boot id has 65 bytes"), "{e}");
        let e = refused(Publication {
            boot_id: "6f1e\n".into(),
            ..stamp()
        });
        assert!(e.contains("not hex digits and dashes"), "{e}");
        let e = refused(Publication {
            generation: 0,
            ..stamp()
        });
        assert!(e.contains("generation 0"), "{e}");
        let e = refused(Publication {
            cpus_online: "0-3\u{1b}[2J".into(),
            ..stamp()
        });
        assert!(e.contains("CPUs online") && e.contains("\\u{1b}"), "{e}");
        let e = refused(Publication {
            nodes_online: "0,".repeat(MAX_ONLINE_LIST_BYTES),
            ..stamp()
        });
        assert!(e.contains("NUMA nodes online has"), "{e}");
        assert!(e.starts_with("bad publication stamp: "), "{e}");
    }
}
