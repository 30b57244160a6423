//! Arbitrary bytes as a topology store and as wloc's topology diff: the
//! readers must return data or an error, never panic; what a store gives
//! must match its checksums, and a diff that parses must apply or be
//! refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_store::{topodiff, Store};

const OLD: &str = "<topology version=\"3.0\">\n  <object type=\"Machine\" os_index=\"0\">\n    <info name=\"A\" value=\"1\"/>\n  </object>\n</topology>\n";

fuzz_target!(|data: &[u8]| {
    if let Ok(mut s) = Store::from_bytes(data.to_vec()) {
        if let Ok(entries) = s.entries() {
            for e in entries.iter().take(64) {
                let _ = s.get_entry(e);
            }
        }
        let _ = s.get("node001");
    }
    // Stores made from the input round-trip.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(d) = topodiff::parse(text) {
            for reverse in [false, true] {
                let _ = topodiff::apply(OLD, &d, reverse);
            }
        }
        let nodes = vec![
            ("a".to_string(), OLD.to_string()),
            ("b".to_string(), text.to_string()),
        ];
        let (bytes, _) =
            wloc_store::pack(nodes, |_| {}).expect("packing never fails on distinct names");
        let mut s = Store::from_bytes(bytes).expect("a packed store opens");
        assert_eq!(s.get("b").expect("a packed node reads back"), text);
    }
});
