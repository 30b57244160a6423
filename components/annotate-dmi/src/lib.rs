//! wloc's built-in annotation component for the machine's identity: the
//! files of `/sys/class/dmi/id` become infos of the root object, named as
//! hwloc's Linux backend names them (`DMIBoardVendor`, `DMIProductName`,
//! ...): at most 63 bytes, up to the first newline.  The machine's
//! dynamic properties (sensors, power, load) are the `annotate-sensors`
//! component's.

wit_bindgen::generate!({
    world: "annotation-backend",
    path: "../../wit/backend@0.1.0",
});

use wloc::backend::files;
use wloc::backend::topology;
use wloc::backend::types::Info;

// hwloc's DMI files and info names, and their folders, as Linux
// discovery reads them.
use wloc_linux::{DMI_FILES, DMI_FOLDERS};

/// Bytes read of a DMI file: they hold one short line.
const SMALL_FILE: u32 = 256;

struct Annotator;

impl Guest for Annotator {
    fn annotate() -> Result<Annotations, String> {
        let root = topology::objects()
            .iter()
            .find(|o| o.parent.is_none())
            .map(|o| u64::from(o.id))
            .ok_or("the topology has no root")?;
        Ok(Annotations {
            infos: dmi_infos(root),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: Vec::new(),
        })
    }
}

export!(Annotator);

/// The first line of a small file, without its newline.
fn first_line(b: &[u8]) -> String {
    let end = b
        .iter()
        .position(|&c| c == b'\n' || c == 0)
        .unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn read_all(paths: &[String]) -> Vec<Option<Vec<u8>>> {
    if paths.is_empty() {
        return Vec::new();
    }
    files::read_many(paths, SMALL_FILE)
        .into_iter()
        .map(Result::ok)
        .collect()
}

/// DMI infos of the root, as hwloc reads them.
fn dmi_infos(root: u64) -> Vec<(u64, Info)> {
    let dir = DMI_FOLDERS.into_iter().find(|d| files::list_dir(d).is_ok());
    let Some(dir) = dir else {
        return Vec::new();
    };
    let paths: Vec<String> = DMI_FILES
        .iter()
        .map(|(f, _)| format!("{dir}/{f}"))
        .collect();
    let mut infos = Vec::new();
    for ((_, name), content) in DMI_FILES.iter().zip(read_all(&paths)) {
        let Some(b) = content else { continue };
        // hwloc reads at most 63 bytes and skips empty files.
        let b = &b[..b.len().min(63)];
        if b.first().is_none_or(|&c| c == 0) {
            continue;
        }
        infos.push((
            root,
            Info {
                name: (*name).to_string(),
                value: first_line(b),
            },
        ));
    }
    infos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines() {
        assert_eq!(first_line(b"ab\ncd"), "ab");
    }
}
