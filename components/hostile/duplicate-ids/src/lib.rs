//! A hostile discovery component for the host's tests: it returns two objects with the same id.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects.push(pu(2, Some(1), 1));
    Ok(d)
}

component!(discover);
