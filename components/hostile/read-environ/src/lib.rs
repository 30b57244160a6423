//! A hostile discovery component for the host's tests: it reads the process environment (/proc/self/environ, WASI variables).
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
            &[
                "/proc/self/environ",
                "/proc/1/environ",
                "/proc/self/cmdline",
                "/proc/self/mem",
            ],
        );
        let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
        d.infos.push(info(
            "wasi environment",
            if vars.is_empty() {
                "empty".to_string()
            } else {
                format!("LEAKED {}", vars.join(","))
            },
        ));
        let args: Vec<String> = std::env::args().collect();
        d.infos.push(info(
            "wasi arguments",
            if args.is_empty() {
                "empty".to_string()
            } else {
                format!("LEAKED {}", args.join(","))
            },
        ));
        Ok(d)
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
