//! Flags and restrictions as hwloc's command-line tools take them:
//! `hwloc_utils_parse_flags` (numbers or flag names), `--restrict
//! [nodeset=]SET` with `--restrict-flags`, `--local-memory-flags` and the
//! form of shown sets (`--cof`).

use wloc_core::{Bitmap, RestrictFlags, Topology};
use wloc_locality::{CpusetFormat, query};

/// Parses the form of shown sets (`--cof`): hwloc, list or taskset.
pub fn parse_set_format(s: &str) -> Result<CpusetFormat, UnknownSetFormat> {
    CpusetFormat::parse(s).ok_or_else(|| UnknownSetFormat(s.to_string()))
}

/// A form of shown sets (`--cof`) that is none of hwloc, list and taskset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown set format '{0}' (expected hwloc, list or taskset)")]
pub struct UnknownSetFormat(pub String);

/// Splits a `--restrict` value into the set and the flag it implies: a
/// value starting with `nodeset` is a NUMA node set (hwloc's tools compare
/// the first 7 characters of `nodeset=` and skip 8).
pub fn split_restrict(spec: &str) -> (&str, RestrictFlags) {
    if spec.starts_with("nodeset") {
        (spec.get(8..).unwrap_or(""), RestrictFlags::BYNODESET)
    } else {
        (spec, RestrictFlags::NONE)
    }
}

/// Restricts the topology to a set in hwloc's form: a CPU set, or a NUMA
/// node set with [`RestrictFlags::BYNODESET`].  As hwloc's tools, a
/// restriction that fails (flags hwloc rejects, bad set, set outside the
/// machine) is reported and the whole topology is kept.
pub fn restrict_topology(topo: &mut Topology, spec: &str, flags: RestrictFlags, quiet: bool) {
    let report = |why: &str| {
        if !quiet {
            eprintln!(
                "wloc: cannot restrict the topology to {spec}: {why}; keeping the whole topology"
            );
        }
    };
    // Flags are judged before the set is read.
    if let Err(e) = flags.validate() {
        return report(&e.to_string());
    }
    let set = match Bitmap::parse(spec) {
        Ok(b) => b,
        Err(e) => return report(&format!("invalid set: {e}")),
    };
    if let Err(e) = topo.restrict_with_flags(&set, flags) {
        report(&e.to_string());
    }
}

/// Parses flags as hwloc's tools do (`hwloc_utils_parse_flags`): a C
/// number, `none`, or names separated by `,`, `|` or `+`, each matching a
/// single flag name anywhere in it, ignoring case (or its end, with a
/// trailing `$`).  On a name matching no flag or several, hwloc's message
/// goes to standard error and every bit is set, which hwloc's functions
/// then reject, as the tools do.
pub fn parse_hwloc_flags(s: &str, names: &[(&str, u64)], kind: &str) -> u64 {
    if let Some(n) = wloc_locality::parse_c_integer(s) {
        // hwloc keeps the number in an int.
        return n as i32 as i64 as u64;
    }
    let upper = s.to_ascii_uppercase();
    if upper == "NONE" {
        return 0;
    }
    let fail = |msg: String| {
        eprintln!("{msg}");
        eprintln!("Supported {kind} flags are substrings of:");
        for (n, _) in names {
            eprintln!("  {n}");
        }
        u64::MAX
    };
    let mut flags = 0u64;
    let mut rest = upper.as_str();
    loop {
        rest = rest.trim_start_matches([',', '|', '+']);
        let end = rest.find([' ', ',', '|', '+']).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        let mut token = &rest[..end];
        rest = rest.get(end + 1..).unwrap_or("");
        let suffix = token.find('$').map(|i| {
            token = &token[..i];
        });
        let matches: Vec<u64> = names
            .iter()
            .filter(|(n, _)| match suffix {
                Some(()) => n.ends_with(token),
                None => n.contains(token),
            })
            .map(|(_, v)| *v)
            .collect();
        match matches.as_slice() {
            [] => return fail(format!("Failed to parse {kind} flag `{token}'.")),
            [v] => flags |= v,
            _ => return fail(format!("Duplicate match for {kind} flag `{token}'.")),
        }
        if rest.is_empty() {
            break;
        }
    }
    flags
}

/// Parses `--restrict-flags` as hwloc's tools do (see [`parse_hwloc_flags`]):
/// anything is read as some flags, as there.
pub fn parse_restrict_flags(s: &str) -> RestrictFlags {
    use RestrictFlags as F;
    // Unknown bits are kept: the restriction rejects them, as hwloc's does.
    F::from_bits_retain(parse_hwloc_flags(
        s,
        &[
            (
                "HWLOC_RESTRICT_FLAG_REMOVE_CPULESS",
                F::REMOVE_CPULESS.bits(),
            ),
            ("HWLOC_RESTRICT_FLAG_BYNODESET", F::BYNODESET.bits()),
            (
                "HWLOC_RESTRICT_FLAG_REMOVE_MEMLESS",
                F::REMOVE_MEMLESS.bits(),
            ),
            ("HWLOC_RESTRICT_FLAG_ADAPT_MISC", F::ADAPT_MISC.bits()),
            ("HWLOC_RESTRICT_FLAG_ADAPT_IO", F::ADAPT_IO.bits()),
        ],
        "restrict",
    ))
}

/// Parses `--local-memory-flags` as hwloc's tools do (see
/// [`parse_hwloc_flags`]); hwloc 2.9 reads `all` as ambiguous (it is also
/// in `SMALLER`), which selects nothing.
pub fn parse_local_memory_flags(s: &str) -> u64 {
    use query::local_flags::*;
    parse_hwloc_flags(
        s,
        &[
            ("HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY", LARGER_LOCALITY),
            (
                "HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY",
                SMALLER_LOCALITY,
            ),
            (
                "HWLOC_LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY",
                INTERSECT_LOCALITY,
            ),
            ("HWLOC_LOCAL_NUMANODE_FLAG_ALL", ALL),
        ],
        "local_numanode",
    )
}
