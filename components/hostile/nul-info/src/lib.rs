//! A hostile discovery component for the host's tests: it returns an info whose name is a NUL character.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects[1].infos.push(info("\0", "hidden"));
    Ok(d)
}

component!(discover);
