//! A hostile discovery component for the host's tests: it opens a TCP connection (imports wasi:sockets).
//! The host must refuse or contain it.  Never shipped.
//!
//! `hostile/net` builds this same file under its own name, for the
//! runtime's tests (`WLOC_HOSTILE_NET_WASM`).

use wloc_hostile_kit::*;

fn discover() -> Result<Discovery, String> {
    match std::net::TcpStream::connect("127.0.0.1:22") {
        Ok(_) => Err("connected".into()),
        Err(e) => Err(format!("no connection: {e}")),
    }
}

component!(discover);
