//! A discovery component that tries to reach the network.  It imports
//! `wasi:sockets`, which the host never links: loading it must fail.

use wloc_guest::Discovery;

struct Net;

impl wloc_guest::Guest for Net {
    fn discover() -> Result<Discovery, String> {
        match std::net::TcpStream::connect("127.0.0.1:22") {
            Ok(_) => Err("connected".into()),
            Err(e) => Err(format!("no connection: {e}")),
        }
    }
}

wloc_guest::export!(Net with_types_in wloc_guest::bindings);
