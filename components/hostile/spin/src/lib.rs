//! A hostile discovery component for the host's tests: it spins forever.
//! The host must refuse or contain it.  Never shipped.
#![allow(unreachable_code, clippy::diverging_sub_expression)]

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        let mut x = 0u64;
        loop {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
