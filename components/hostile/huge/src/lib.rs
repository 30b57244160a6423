//! A hostile discovery component for the host's tests: it returns more objects and bytes than any cap allows.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    for i in 0..300_000u32 {
        d.objects.push(obj(10 + i, Some(1), ObjectType::Misc));
    }
    d.objects[1].infos.push(info("big", "x".repeat(4 << 20)));
    Ok(d)
}

component!(discover);
