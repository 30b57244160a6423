//! A hostile discovery component for the host's tests: it returns out-of-range indexes (a parent, a distance object, a memory attribute target).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects[1].parent = Some(4_000_000_000);
    d.distances
        .push(distances(vec![2, 99], vec![10, 20, 20, 10]));
    d.memattrs.push(bandwidth(1234));
    Ok(d)
}

component!(discover);
