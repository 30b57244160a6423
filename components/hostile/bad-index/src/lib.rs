//! A hostile discovery component for the host's tests: it returns out-of-range indexes (a parent, a distance object, a memory attribute target).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        let mut d = small();
        d.objects[1].parent = Some(4_000_000_000);
        d.distances.push(Distances {
            name: None,
            kind: 5,
            objects: vec![2, 99],
            values: vec![10, 20, 20, 10],
        });
        d.memattrs.push(Memattr {
            name: "Bandwidth".into(),
            flags: 5,
            values: vec![MemattrValue {
                target: 1234,
                initiator: None,
                value: 1,
            }],
        });
        Ok(d)
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
