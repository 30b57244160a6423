//! A hostile annotation component for the host's tests: a chain of 300
//! Misc objects, the first under the deepest object of the topology, each
//! next one under the previous.  A record names parents by gp index and
//! the new objects have none yet, so the chain guesses them: the gp
//! indexes after the largest one the topology holds, as a host numbering
//! new objects in order would give them.  The host must refuse it
//! cleanly (an unknown parent, or a tree deeper than 256 levels when the
//! topology is deep already) or apply it, in bounded time and memory.
//! Never shipped.

use wloc_hostile_annotation_kit::*;

const CHAIN: u32 = 300;

fn annotate() -> Result<Annotations, String> {
    let objs = objects()?;
    let mut a = empty();
    a.misc.push((u64::from(deepest(&objs)?), "chain-0".into()));
    for k in 1..CHAIN {
        a.misc
            .push((u64::from(unused_gp(&objs, k - 1)), format!("chain-{k}")));
    }
    Ok(a)
}

annotator!(annotate);
