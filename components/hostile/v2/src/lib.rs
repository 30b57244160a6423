//! A discovery component built against `wloc:backend@0.2.0`, a version
//! the host does not implement (a copy of 0.1.0 under a new version):
//! loading it must fail with a message naming the interface.

wit_bindgen::generate!({
    world: "discovery-backend",
    path: "wit",
});

struct Newer;

impl Guest for Newer {
    fn discover() -> Result<Discovery, String> {
        wloc::backend::log::log(wloc::backend::log::Level::Info, "speaking 0.2.0");
        Err("not meant to run".into())
    }
}

export!(Newer);
