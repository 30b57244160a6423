//! A hostile discovery component for the host's tests: it returns objects whose parents form a cycle.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects.push(obj(5, Some(6), ObjectType::Group));
    d.objects.push(obj(6, Some(5), ObjectType::Group));
    Ok(d)
}

component!(discover);
