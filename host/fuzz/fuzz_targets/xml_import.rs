//! Arbitrary bytes as an hwloc XML document: import must return a topology
//! or an error, never panic; what imports must export and import again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_xml::{export, import_str, XmlVersion};
use wloc_core::{Topology, TypeFilter};

fn keep_all() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = import_str(text, keep_all()) {
        for v in [XmlVersion::V3, XmlVersion::V2] {
            let doc = export(&t, v);
            let back = import_str(&doc, keep_all())
                .unwrap_or_else(|e| panic!("own export does not import: {e}\n{doc}"));
            assert_eq!(export(&back, v), export(&import_str(&export(&back, v), keep_all()).unwrap(), v));
        }
    }
});
