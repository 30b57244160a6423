//! A hostile discovery component for the host's tests: it returns 20,000 Groups without parents with the same cpuset, none to be merged.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = machine(4);
    for i in 0..20_000u32 {
        d.objects.push(group(100 + i, None, vec![0xf], true));
    }
    Ok(d)
}

component!(discover);
