//! A hostile discovery component for the host's tests: it returns malformed sets (an infinite PU set, an empty one, a set naming another PU).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects[1].cpuset = Some(Bitmap {
        words: vec![u64::MAX],
        infinite: true,
    });
    d.objects.push(Object {
        cpuset: set(Vec::new()),
        ..pu(3, Some(1), 1)
    });
    d.objects.push(Object {
        cpuset: set(vec![1 << 7]),
        ..pu(4, Some(1), 2)
    });
    Ok(d)
}

component!(discover);
