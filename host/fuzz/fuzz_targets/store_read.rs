//! Arbitrary bytes as a topology store, as squeezed lines and as wloc's
//! topology diff: the readers must return data or an error, never panic;
//! what a store gives must match its checksums, squeezed lines decode
//! within their budget and to at most a fixed multiple of their size,
//! and a diff that parses must apply or be refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_store::{Store, squeeze, topodiff};

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
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if let Ok(t) = squeeze::unsqueeze_bounded(&lines, 4096) {
        assert!(t.len() <= 4096);
    }
    if let Ok(t) = squeeze::unsqueeze_bounded(&lines, usize::MAX) {
        assert!(
            t.len() <= 256 * (data.len() + 1),
            "{} from {}",
            t.len(),
            data.len()
        );
    }
    // Stores made from the input round-trip (or are refused as too large
    // for the size of their squeezed lines).
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
        match wloc_store::pack(nodes, |_| {}) {
            Ok((bytes, _)) => {
                let mut s = Store::from_bytes(bytes).expect("a packed store opens");
                assert_eq!(s.get("b").expect("a packed node reads back"), text);
            }
            Err(e) => assert!(e.0.contains("too large for the store"), "{e}"),
        }
    }
});
