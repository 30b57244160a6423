//! A hostile annotation component for the host's tests: 1,000,000 Misc
//! objects under the root.  Shown a topology of exactly 2 PUs, it returns
//! 65,536 instead, the most a record may hold, so that a test measures
//! what the host does with a record it accepts.  (A component gets no
//! settings from `wloc ls`, so the topology chooses.)  The host must
//! refuse it cleanly or apply it, in bounded time and memory.  Never
//! shipped.

use wloc_hostile_annotation_kit::*;

/// Misc objects returned.
const COUNT: usize = 1_000_000;
/// Misc objects returned on a topology of 2 PUs: the host's cap.
const AT_CAP: usize = 1 << 16;

fn annotate() -> Result<Annotations, String> {
    let objs = objects()?;
    let root = root(&objs)?;
    let count = if pu_count(&objs) == 2 { AT_CAP } else { COUNT };
    let mut a = empty();
    a.misc.reserve_exact(count);
    for k in 0..count {
        a.misc.push((root, format!("m{k}")));
    }
    Ok(a)
}

annotator!(annotate);
