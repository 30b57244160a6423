//! Arbitrary bytes as an hwloc XML document: import must return a topology
//! or an error, never panic; what imports must export and import again.
//! The fast tokeniser (hwloc 2/3 documents) and the reference parser must
//! agree on every input: same topology and warnings, or the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::{Topology, TypeFilter};
use wloc_xml::{XmlVersion, export, import_str, import_str_reference, import_str_with_warnings};

fn keep_all() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t
}

/// A valid hwloc 2 document; random bytes spliced into it at `BODY` (inside
/// the root object) or `TAIL` (after it) reach the fast tokeniser and the
/// importer's deeper checks far more often than raw bytes do.
const TEMPLATE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="1">
    BODY<object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2" local_memory="1024"/>
    <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3">
      <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4"/>
      <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
    </object>
  </object>
  TAIL
</topology>
"#;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(raw) = std::str::from_utf8(rest) else {
        return;
    };
    let text = match mode % 3 {
        0 => raw.to_string(),
        1 => TEMPLATE.replace("BODY", raw).replace("TAIL", ""),
        _ => TEMPLATE.replace("BODY", "").replace("TAIL", raw),
    };
    let text = text.as_str();
    let fast = import_str_with_warnings(text, keep_all());
    let reference = import_str_reference(text, keep_all());
    match (&fast, &reference) {
        (Ok((a, wa)), Ok((b, wb))) => {
            assert_eq!(export(a, XmlVersion::V3), export(b, XmlVersion::V3));
            assert_eq!(wa, wb);
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!(
            "fast and reference paths disagree: {:?} / {:?}",
            fast.as_ref().map(|(_, w)| w),
            reference.as_ref().map(|(_, w)| w)
        ),
    }
    if let Ok((t, _)) = fast {
        for v in [XmlVersion::V3, XmlVersion::V2] {
            let doc = export(&t, v);
            let back = import_str(&doc, keep_all())
                .unwrap_or_else(|e| panic!("own export does not import: {e}\n{doc}"));
            assert_eq!(
                export(&back, v),
                export(&import_str(&export(&back, v), keep_all()).unwrap(), v)
            );
        }
    }
});
