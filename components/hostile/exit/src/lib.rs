//! A hostile discovery component for the host's tests: it calls exit.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    std::process::exit(3)
}

component!(discover);
