//! Feeds arbitrary UTF-8 to the synthetic description parser.  No input may
//! panic or hang; errors must point inside the input; small accepted
//! descriptions must build, export, and export again to the same string
//! after a round trip through the parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::Topology;
use wloc_core::object::ObjType;
use wloc_core::synthetic::{ExportFlags, export, parse};
use wloc_core::topology::TypeFilter;

/// lstopo's filters: keep everything but I/O and Misc.
fn topology() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepNone);
    let _ = t.set_type_filter(ObjType::Misc, TypeFilter::KeepNone);
    t
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let desc = match parse(input) {
        Ok(d) => d,
        Err(e) => {
            if let Some(p) = e.position() {
                assert!(
                    p <= input.len(),
                    "{input:?}: position {p} past the end: {e}"
                );
            }
            let _ = e.to_string();
            return;
        }
    };
    let levels = desc.levels();
    assert_eq!(levels.first().map(|l| l.obj_type), Some(ObjType::Machine));
    assert_eq!(levels.last().map(|l| l.obj_type), Some(ObjType::PU));
    assert!(desc.pu_count() >= 1);
    // Building is quadratic in the arity (inserting by cpuset); keep the
    // builds small enough for sanitizer speed.
    let arities: u64 = levels.iter().map(|l| u64::from(l.arity)).sum();
    if desc.object_count().saturating_mul(arities) > 1 << 18 {
        return;
    }
    let Ok(topo) = desc.build(topology()) else {
        // Only the build budgets may refuse a parsed description.
        return;
    };
    assert_eq!(topo.objs_by_type(ObjType::PU).len() as u64, desc.pu_count());
    for flags in 0..16 {
        let _ = export(&topo, ExportFlags::from_bits(flags).unwrap());
    }
    let first = export(&topo, ExportFlags::NONE)
        .unwrap_or_else(|e| panic!("{input:?} built but does not export: {e}"));
    let again = parse(&first)
        .and_then(|d| d.build(topology()))
        .unwrap_or_else(|e| panic!("{input:?} exported as {first:?}, which fails: {e}"));
    let second = export(&again, ExportFlags::NONE).unwrap();
    assert_eq!(first, second, "{input:?}");
});
