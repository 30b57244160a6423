//! A hostile discovery component for the host's tests: it returns two PUs and two NUMA nodes without parents, placed by their sets.
//! The host must refuse it cleanly or build a valid tree from it, in
//! bounded time and memory.  Never shipped.

#[allow(unused_imports)]
use wloc_hostile_kit::records::*;
use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    d.objects.truncate(1);
    d.objects.push(pu(2, None, 0));
    d.objects.push(pu(3, None, 1));
    d.objects.push(node(4, None, 0, vec![1]));
    d.objects.push(node(5, None, 1, vec![2]));
    Ok(d)
}

component!(discover);
