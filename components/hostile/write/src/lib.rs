//! A hostile discovery component for the host's tests: it writes files through WASI.
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    for p in [
        "/sys/ok",
        "/sys/new-file",
        "/tmp/wloc-hostile-write",
        "new-file",
    ] {
        let v = match std::fs::write(p, b"written by a component") {
            Ok(()) => "WROTE".to_string(),
            Err(e) => format!("refused: {e}"),
        };
        d.infos.push(info(format!("write {p}"), v));
        let v = match std::fs::create_dir(format!("{p}.d")) {
            Ok(()) => "WROTE".to_string(),
            Err(e) => format!("refused: {e}"),
        };
        d.infos.push(info(format!("mkdir {p}.d"), v));
    }
    Ok(d)
}

component!(discover);
