//! A hostile discovery component for the host's tests: it reads absolute paths outside its grant.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

/// A read inside the grant, to show the grant itself works.
fn control(d: &mut Discovery) {
    let r = files::read_many(&["/sys/ok".to_string()], 64);
    d.infos.push(info(
        "control /sys/ok",
        match &r[0] {
            Ok(b) => format!("read {}", String::from_utf8_lossy(b).trim()),
            Err(e) => describe_err(e),
        },
    ));
}

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        let mut d = small();
        control(&mut d);
        probe(
            &mut d,
            &["/etc/passwd", "/etc/shadow", "/", "/root", "/home", "/sysx"],
        );
        Ok(d)
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
