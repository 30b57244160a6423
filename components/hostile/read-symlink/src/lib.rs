//! A hostile discovery component for the host's tests: it follows symbolic links that leave its grant (to /etc).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = probe_outside_grant(&[
        "/sys/escape/passwd",
        "/sys/escape",
        "/sys/rel-escape/passwd",
        "/sys/hop/passwd",
    ]);
    for p in ["/sys/escape", "/sys/rel-escape"] {
        // Reading the link text is allowed (it stays a string); what
        // it points to is not.
        let v = match files::read_link(p) {
            Ok(t) => format!("link text {t}"),
            Err(e) => describe_err(&e),
        };
        d.infos.push(info(format!("readlink {p}"), v));
    }
    Ok(d)
}

component!(discover);
