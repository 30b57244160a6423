//! A hostile discovery component for the host's tests: it returns 400 nested Groups without parents, so that their sets alone make the tree 400 levels deep.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = machine(512);
    for i in 0..400u32 {
        d.objects
            .push(group(1000 + i, None, first_pus(512 - i), false));
    }
    Ok(d)
}

component!(discover);
