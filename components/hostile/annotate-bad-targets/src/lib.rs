//! A hostile annotation component for the host's tests: a record naming
//! objects that do not exist or malformed, one fault per record since the
//! host stops at the first.  A component gets no settings from `wloc ls`,
//! so the fault is chosen by the topology it is shown: with N PUs,
//! 1. an info on a gp index no object has;
//! 2. an info whose name holds a NUL;
//! 3. a distance matrix of 3 objects with 4 values (not objects²);
//! 4. a distance matrix naming a gp index no object has;
//! 5. a memory attribute value whose target does not exist;
//! 6. a memory attribute value whose initiator does not exist;
//! 7. a dynamic property of an object that does not exist;
//! 8. a Misc object under a gp index no object has;
//!
//! otherwise (more PUs) a valid info on the root, so that a test knows
//! the component ran.  The host must refuse each with a message naming
//! the fault, in bounded time and memory.  Never shipped.

use wloc_hostile_annotation_kit::*;

/// A gp index far past any topology's.
const BOGUS: u32 = 999_999_999;

fn annotate() -> Result<Annotations, String> {
    let objs = objects()?;
    let root = root(&objs)?;
    let pus: Vec<u32> = objs
        .iter()
        .filter(|o| o.type_ == ObjectType::Pu)
        .map(|o| o.id)
        .collect();
    let mut a = empty();
    match pu_count(&objs) {
        1 => a.infos.push((u64::from(BOGUS), info("Bogus", "target"))),
        2 => a.infos.push((root, info("nul\0name", "v"))),
        3 => a.distances.push(Distances {
            name: None,
            kind: 5,
            objects: pus.clone(),
            values: vec![10, 20, 20, 10],
        }),
        4 => a.distances.push(Distances {
            name: None,
            kind: 5,
            objects: vec![pus[0], BOGUS],
            values: vec![10, 20, 20, 10],
        }),
        5 => a.memattrs.push(Memattr {
            name: "Bandwidth".into(),
            flags: 1,
            values: vec![MemattrValue {
                target: BOGUS,
                initiator: None,
                value: 1,
            }],
        }),
        6 => {
            let node = objs
                .iter()
                .find(|o| o.type_ == ObjectType::NumaNode)
                .map(|o| o.id)
                .ok_or("the topology has no NUMA node")?;
            a.memattrs.push(Memattr {
                name: "Latency".into(),
                flags: 2 | 4,
                values: vec![MemattrValue {
                    target: node,
                    initiator: Some(Initiator::Object(BOGUS)),
                    value: 1,
                }],
            });
        }
        7 => a.properties.push(DynamicProperty {
            object: u64::from(BOGUS),
            name: "temperature".into(),
            value: 42.0,
            unit: "°C".into(),
        }),
        8 => a.misc.push((u64::from(BOGUS), "orphan".into())),
        _ => a.infos.push((root, info("HostileAnnotation", "ran"))),
    }
    Ok(a)
}

annotator!(annotate);
