//! Any bytes, as each of the three InfiniBand formats and as a set of
//! files: an answer or an error with a line number, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for r in [
        wloc_ib::parse_ports_report("f", text).err(),
        wloc_ib::parse_topology_file("f", text).err(),
        wloc_ib::parse_ibroute(text).err(),
    ]
    .into_iter()
    .flatten()
    {
        assert!(r.line <= text.lines().count());
    }
    // Split into a report and a table at the first blank line.
    let (a, b) = text.split_once("\n\n").unwrap_or((text, ""));
    let _ = wloc_ib::read_files(&[
        ("ib-subnet-x.txt".into(), a.into()),
        ("ibroute-x-1.txt".into(), b.into()),
    ]);
});
