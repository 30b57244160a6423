//! A hostile discovery component for the host's tests: it panics.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    panic!("hostile component panicked on purpose")
}

component!(discover);
