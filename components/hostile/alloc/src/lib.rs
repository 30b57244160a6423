//! A hostile discovery component for the host's tests: it allocates without bound.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}

component!(discover);
