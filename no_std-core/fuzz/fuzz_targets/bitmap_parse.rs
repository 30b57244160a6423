//! Feeds arbitrary UTF-8 to the three bitmap parsers; every accepted input
//! must print to strings that parse back to the same set in all three forms,
//! and no input may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::bitmap::{Bitmap, CpuSet};

fn round_trip(input: &str, b: &Bitmap) {
    let hwloc = b.to_string();
    assert_eq!(
        Bitmap::parse(&hwloc).as_ref(),
        Ok(b),
        "hwloc form {hwloc:?} of {input:?}"
    );
    let list = b.to_list_string();
    assert_eq!(
        Bitmap::parse_list(&list).as_ref(),
        Ok(b),
        "list form {list:?} of {input:?}"
    );
    let taskset = b.to_taskset_string();
    assert_eq!(
        Bitmap::parse_taskset(&taskset).as_ref(),
        Ok(b),
        "taskset form {taskset:?} of {input:?}"
    );
    // A few algebra sanity checks on whatever was parsed.
    let not = !b;
    assert!((b & &not).is_empty());
    assert!((b | &not).is_full());
    assert_eq!(b.weight().is_none(), b.is_infinite());
    assert_eq!(CpuSet::from_bitmap(b.clone()).to_string(), hwloc);
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = core::str::from_utf8(data) else {
        return;
    };
    for parsed in [
        Bitmap::parse(s),
        Bitmap::parse_list(s),
        Bitmap::parse_taskset(s),
    ] {
        match parsed {
            Ok(b) => round_trip(s, &b),
            Err(e) => {
                assert!(e.position() <= s.len(), "{e}");
                let _ = e.to_string();
            }
        }
    }
});
