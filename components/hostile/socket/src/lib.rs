//! A hostile discovery component for the host's tests: it opens a TCP connection (imports wasi:sockets).
//! The host must refuse or contain it.  Never shipped.

use wloc_hostile_kit::*;

struct Hostile;

impl Guest for Hostile {
    fn discover() -> Result<Discovery, String> {
        match std::net::TcpStream::connect("127.0.0.1:22") {
            Ok(_) => Err("connected".into()),
            Err(e) => Err(format!("no connection: {e}")),
        }
    }
}

export!(Hostile with_types_in wloc_hostile_kit::bindings);
