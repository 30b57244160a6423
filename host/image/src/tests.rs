//! Unit tests: round trips, refusals and property tests.

use super::*;
use wloc_core::synthetic;
use wloc_core::{ObjType, TypeFilter};

pub(crate) fn synth(desc: &str) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    synthetic::parse(desc).unwrap().build(t).unwrap()
}

#[test]
fn round_trip_small() {
    let t = synth("pack:2 core:2 pu:2");
    let bytes = to_bytes(&t);
    let img = adopt_bytes(&bytes).unwrap();
    assert_eq!(img.objs_by_type(ObjType::PU).len(), 8);
    assert_eq!(img.root().obj_type(), ObjType::Machine);
    let back = img.to_topology().unwrap();
    assert_eq!(to_bytes(&back), bytes);
}
