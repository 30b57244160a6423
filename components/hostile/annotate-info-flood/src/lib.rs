//! A hostile annotation component for the host's tests: 4,096 infos with
//! 256-byte names for each of 64 targets, the topology's objects taken in
//! turn (262,144 infos, the most a record may hold), so that an object
//! met again gets more than 4,096.  (512 targets, 2 million infos, would
//! not fit the component's own 256 MiB before the host sees them.)
//! The host must refuse it cleanly or apply it, in bounded time and
//! memory.  Never shipped.

use wloc_hostile_annotation_kit::*;

/// Infos per target: the most one object may hold.
const PER_TARGET: usize = 4096;
/// Targets, objects taken in turn.
const TARGETS: usize = 64;
/// Bytes of each info name.
const NAME_BYTES: usize = 256;

fn annotate() -> Result<Annotations, String> {
    let objs = objects()?;
    let pad = "x".repeat(NAME_BYTES);
    let mut a = empty();
    a.infos.reserve_exact(PER_TARGET * TARGETS);
    for t in 0..TARGETS {
        let gp = u64::from(objs[t % objs.len()].id);
        for k in 0..PER_TARGET {
            // Padded in one copy: the record's cost is for the host.
            let mut name = String::with_capacity(NAME_BYTES);
            name.push_str(&format!("flood-{t}-{k}-"));
            name.push_str(&pad[..NAME_BYTES - name.len()]);
            a.infos.push((gp, info(name, "v")));
        }
    }
    Ok(a)
}

annotator!(annotate);
