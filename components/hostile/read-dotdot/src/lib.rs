//! A hostile discovery component for the host's tests: it reads outside its grant with `..` components.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    Ok(probe_outside_grant(&[
        "/sys/../etc/passwd",
        "/sys/./../etc",
        "/sys/class/../../etc/hostname",
        "/sys/..",
    ]))
}

component!(discover);
