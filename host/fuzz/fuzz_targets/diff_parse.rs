//! Arbitrary bytes as a topology diff, of both kinds `wloc patch` reads:
//! wloc's line diff (`wloc-topology-diff 1` with `@@ -A,B +C,D @@`
//! headers) and hwloc's XML `<topologydiff>`. Parsing and applying either
//! way must give a result or an error, never a panic, whatever numbers the
//! headers and attributes hold; a line diff that parses is written back
//! and read again unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::Topology;
use wloc_store::topodiff;
use wloc_xml::diff;

const OLD: &str = "<topology version=\"3.0\">\n  <object type=\"Machine\" os_index=\"0\">\n    <info name=\"A\" value=\"1\"/>\n  </object>\n</topology>\n";

/// Raw bytes rarely make a header; half of the runs put them after a
/// valid first line and header prefix, where the numbers are.
fn line_diff(text: &str) {
    for doc in [
        text.to_string(),
        format!("wloc-topology-diff 1\n@@ -{text}"),
    ] {
        if let Ok(d) = topodiff::parse(&doc) {
            for reverse in [false, true] {
                let _ = topodiff::apply(OLD, &d, reverse);
            }
            let back = topodiff::parse(&topodiff::to_text(&d, OLD))
                .expect("a written line diff reads back");
            assert_eq!(back, d, "a line diff does not read back as written");
        }
    }
}

/// The same for hwloc's diffs, also with the bytes as the attributes of
/// one `<diff>`, applied to a small topology.
fn xml_diff(text: &str, topo: &Topology) {
    for doc in [
        text.to_string(),
        format!("<topologydiff><diff {text}/></topologydiff>"),
    ] {
        if let Ok(d) = diff::parse(&doc) {
            for reverse in [false, true] {
                let mut t = topo.clone();
                let _ = diff::apply(&mut t, &d.changes, reverse);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    line_diff(text);
    static TOPO: std::sync::OnceLock<Topology> = std::sync::OnceLock::new();
    let topo = TOPO.get_or_init(|| {
        wloc_core::synthetic::parse("pack:2 core:2 pu:2")
            .expect("a valid description")
            .build(Topology::new())
            .expect("a valid topology")
    });
    xml_diff(text, topo);
});
