//! A hostile discovery component for the host's tests: it reads absolute paths outside its grant.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    Ok(probe_outside_grant(&[
        "/etc/passwd",
        "/etc/shadow",
        "/",
        "/root",
        "/home",
        "/sysx",
    ]))
}

component!(discover);
