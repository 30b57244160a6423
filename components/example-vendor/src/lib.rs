//! An example third-party annotation component for wloc (see README.md).
//!
//! For every network interface of the topology (an OS device of kind
//! network, such as `eth0`), it reads `/sys/class/net/NAME/mtu` and
//! `/sys/class/net/NAME/speed` and adds the infos `MTU` (bytes) and
//! `LinkSpeed` (`N Mb/s`, when the driver reports one).  It asks for one
//! read-only grant, `/sys/class/net`, and reads all files in one call.

wit_bindgen::generate!({
    world: "annotation-backend",
    path: "../../wit/backend@0.1.0",
});

use wloc::backend::types::{Info, ObjectAttr, ObjectType};
use wloc::backend::{files, log, topology};

/// The OS device kind bit of network interfaces (see `types.wit`).
const NETWORK: u32 = 16;

struct Example;

impl Guest for Example {
    fn annotate() -> Result<Annotations, String> {
        let mut out = Annotations {
            infos: Vec::new(),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: Vec::new(),
        };
        // The interfaces: OS devices of kind network, with their names.
        let nics: Vec<(u64, String)> = topology::objects()
            .into_iter()
            .filter(|o| {
                o.type_ == ObjectType::OsDevice
                    && matches!(o.attr, ObjectAttr::OsDevice(k) if k & NETWORK != 0)
            })
            .filter_map(|o| Some((u64::from(o.id), o.name?)))
            // A name is a path component: nothing that could climb out.
            .filter(|(_, n)| !n.is_empty() && !n.contains('/') && n != "." && n != "..")
            .collect();
        if nics.is_empty() {
            return Ok(out);
        }
        let paths: Vec<String> = nics
            .iter()
            .flat_map(|(_, n)| {
                [
                    format!("/sys/class/net/{n}/mtu"),
                    format!("/sys/class/net/{n}/speed"),
                ]
            })
            .collect();
        let contents = files::read_many(&paths, 64);
        for (i, (gp, name)) in nics.iter().enumerate() {
            let value = |k: usize| -> Option<i64> {
                let b = contents.get(2 * i + k)?.as_ref().ok()?;
                String::from_utf8_lossy(b).trim().parse().ok()
            };
            if let Some(mtu) = value(0) {
                out.infos.push((
                    *gp,
                    Info {
                        name: "MTU".into(),
                        value: mtu.to_string(),
                    },
                ));
            }
            // Drivers without a link speed report -1 or fail the read.
            match value(1) {
                Some(s) if s > 0 => out.infos.push((
                    *gp,
                    Info {
                        name: "LinkSpeed".into(),
                        value: format!("{s} Mb/s"),
                    },
                )),
                _ => log::log(log::Level::Debug, &format!("{name}: no link speed")),
            }
        }
        Ok(out)
    }
}

export!(Example);

/// The component's manifest (see `manifest.toml`), carried inside the
/// `.wasm` file as a custom section so that a signature covers it.
#[unsafe(link_section = "wloc:manifest")]
#[used]
static MANIFEST: [u8; include_bytes!("../manifest.toml").len()] =
    *include_bytes!("../manifest.toml");
