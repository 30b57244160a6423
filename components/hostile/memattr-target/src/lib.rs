//! A hostile discovery component for the host's tests: it returns a memory attribute value whose target is a PU.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects.push(node(3, Some(1), 0, vec![1]));
    d.memattrs.push(Memattr {
        name: "Bandwidth".into(),
        flags: 5,
        values: vec![MemattrValue {
            target: 2,
            initiator: Some(Initiator::Object(2)),
            value: 1,
        }],
    });
    Ok(d)
}

component!(discover);
