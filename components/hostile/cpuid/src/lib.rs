//! A hostile discovery component for the host's tests: it imports cpuid without asking for it in its manifest.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let (a, _, _, _) = cpuid::query(0, 0, 0);
    let mut d = small();
    d.infos.push(info("cpuid leaf 0 eax", a.to_string()));
    Ok(d)
}

component!(discover);
