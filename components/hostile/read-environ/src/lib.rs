//! A hostile discovery component for the host's tests: it reads the process environment (/proc/self/environ, WASI variables).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

/// What leaked of a list: `empty`, or `LEAKED` and the list.
fn leaked(items: Vec<String>) -> String {
    if items.is_empty() {
        "empty".to_string()
    } else {
        format!("LEAKED {}", items.join(","))
    }
}

/// The environment, command line and memory of this process and another.
const PRIVATE: &[&str] = &[
    "/proc/self/environ",
    "/proc/1/environ",
    "/proc/self/cmdline",
    "/proc/self/mem",
];

fn discover() -> Result<Discovery, String> {
    let mut d = probe_outside_grant(PRIVATE);
    let vars = std::env::vars().map(|(k, _)| k).collect();
    d.infos.push(info("wasi environment", leaked(vars)));
    d.infos
        .push(info("wasi arguments", leaked(std::env::args().collect())));
    Ok(d)
}

component!(discover);
