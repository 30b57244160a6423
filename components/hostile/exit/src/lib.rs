//! A hostile discovery component for the host's tests: it calls exit.
//! The host must refuse or contain it.  Never shipped.
#![allow(unreachable_code, clippy::diverging_sub_expression)]

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        std::process::exit(3)
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
