//! Feeds arbitrary bytes to the CPUID dump reader as the files of a dump
//! directory; whatever parses is then decoded.  No input may panic, and a
//! parsed dump answers every query.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::Topology;
use wloc_probe::{CpuidSource, DumpSource, discover};

fuzz_target!(|data: &[u8]| {
    // Byte 0 picks the layout; 0xff bytes separate files.
    let (mode, rest) = match data.split_first() {
        Some((&m, r)) => (m, r),
        None => (0, data),
    };
    let mut chunks = rest.split(|&b| b == 0xff);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut info = if mode & 1 == 0 {
        b"Architecture: x86\n".to_vec()
    } else {
        Vec::new()
    };
    info.extend_from_slice(chunks.next().unwrap_or(&[]));
    files.push(("hwloc-cpuid-info".into(), info));
    for (i, chunk) in chunks.take(8).enumerate() {
        // Mode bit 1 leaves a hole in the numbering, bit 2 uses odd names.
        let index = if mode & 2 != 0 && i > 0 { i + 1 } else { i };
        let name = if mode & 4 != 0 && i == 1 {
            format!("pu0{index}")
        } else {
            format!("pu{index}")
        };
        files.push((name, chunk.to_vec()));
    }
    if mode & 8 != 0 {
        files.reverse();
    }
    match DumpSource::from_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice()))) {
        Ok(d) => {
            assert!(d.pu_count() >= 1 && d.pu_count() <= 9);
            for pu in 0..d.pu_count() {
                let _ = d.cpuid(pu, 0, 0);
                let _ = d.cpuid(pu, 4, 7);
            }
            let _ = discover(&d, Topology::new());
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
