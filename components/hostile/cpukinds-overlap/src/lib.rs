//! A hostile discovery component for the host's tests: it returns CPU kinds that overlap, to be split as hwloc does.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = machine(4);
    d.cpukinds.push(Cpukind {
        cpuset: Bitmap {
            words: vec![0b0111],
            infinite: false,
        },
        forced_efficiency: None,
        infos: vec![info("CoreType", "big")],
    });
    d.cpukinds.push(Cpukind {
        cpuset: Bitmap {
            words: vec![0b1100],
            infinite: false,
        },
        forced_efficiency: None,
        infos: vec![info("FrequencyMaxMHz", "2000")],
    });
    Ok(d)
}

component!(discover);
