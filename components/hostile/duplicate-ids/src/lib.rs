//! A hostile discovery component for the host's tests: it returns two objects with the same id.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        let mut d = small();
        d.objects.push(pu(2, Some(1), 1));
        Ok(d)
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
