//! A hostile discovery component for the host's tests: it panics.
//! The host must refuse or contain it.  Never shipped.
#![allow(unreachable_code, clippy::diverging_sub_expression)]

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        panic!("hostile component panicked on purpose")
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
