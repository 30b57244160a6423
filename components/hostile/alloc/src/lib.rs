//! A hostile discovery component for the host's tests: it allocates without bound.
//! The host must refuse or contain it.  Never shipped.
#![allow(unreachable_code, clippy::diverging_sub_expression)]

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(vec![1u8; 1 << 20]);
            std::hint::black_box(&hoard);
        }
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
