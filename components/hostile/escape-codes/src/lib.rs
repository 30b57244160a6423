//! A hostile discovery component for the host's tests: it floods the log with terminal escape sequences.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    for i in 0..10_000 {
        log::log(
            log::Level::Error,
            &format!("flood {i} \x1b[2J\x1b]0;owned\x07 \u{202e}txet"),
        );
    }
    Err("gave up \x1b[31mred\x1b[0m".into())
}

component!(discover);
