//! A hostile discovery component for the host's tests: it returns a NUMA node whose parent is a PU.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects.push(node(3, Some(2), 0, vec![1]));
    Ok(d)
}

component!(discover);
