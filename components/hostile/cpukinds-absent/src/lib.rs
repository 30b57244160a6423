//! A hostile discovery component for the host's tests: it returns a CPU kind naming PUs the record does not have.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    // PUs 0 and 3; the kind names 0-3.
    let mut d = small();
    d.objects.push(pu(3, Some(1), 3));
    d.cpukinds.push(Cpukind {
        cpuset: Bitmap {
            words: vec![0b1111],
            infinite: false,
        },
        forced_efficiency: None,
        infos: Vec::new(),
    });
    Ok(d)
}

component!(discover);
