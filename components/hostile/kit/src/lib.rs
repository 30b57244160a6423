//! What the hostile test components share: the bindings of the
//! `discovery-backend` world (without `wloc-core`, so each component
//! stays small and quick to build), [`component!`] to export an attack,
//! a small valid answer that they fill with what their attempts got, and
//! the probes of files outside a grant.  Never shipped.

/// The generated bindings of the `discovery-backend` world.
pub mod bindings {
    wit_bindgen::generate!({
        world: "discovery-backend",
        path: "../../../wit/backend@0.1.0",
        pub_export_macro: true,
        default_bindings_module: "wloc_hostile_kit::bindings",
    });
}

pub use bindings::wloc::backend::types::*;
pub use bindings::wloc::backend::{config, cpuid, files, log};
pub use bindings::{Guest, export};

/// Exports a function `fn() -> Result<Discovery, String>` (the attack) as
/// the component's `discover`.
#[macro_export]
macro_rules! component {
    ($discover:path) => {
        struct Hostile;

        impl $crate::Guest for Hostile {
            fn discover() -> ::core::result::Result<$crate::Discovery, ::std::string::String> {
                $discover()
            }
        }

        $crate::export!(Hostile with_types_in $crate::bindings);
    };
}

/// An object with no sets and no attributes.
pub fn obj(id: u32, parent: Option<u32>, type_: ObjectType) -> Object {
    Object {
        id,
        parent,
        type_,
        os_index: None,
        name: None,
        subtype: None,
        cpuset: None,
        complete_cpuset: None,
        nodeset: None,
        complete_nodeset: None,
        attr: ObjectAttr::None,
        infos: Vec::new(),
    }
}

/// A finite set of words.
pub fn set(words: Vec<u64>) -> Option<Bitmap> {
    Some(Bitmap {
        words,
        infinite: false,
    })
}

/// A PU of OS index `os`.
pub fn pu(id: u32, parent: Option<u32>, os: u32) -> Object {
    let mut words = vec![0u64; os as usize / 64 + 1];
    words[os as usize / 64] = 1 << (os % 64);
    Object {
        os_index: Some(os),
        cpuset: set(words),
        ..obj(id, parent, ObjectType::Pu)
    }
}

/// A valid machine with one PU.
pub fn small() -> Discovery {
    Discovery {
        objects: vec![obj(1, None, ObjectType::Machine), pu(2, Some(1), 0)],
        distances: Vec::new(),
        memattrs: Vec::new(),
        cpukinds: Vec::new(),
        infos: Vec::new(),
        allowed_cpuset: None,
        allowed_nodeset: None,
        support: Vec::new(),
        memtiers: Vec::new(),
        pci_localities: Vec::new(),
    }
}

/// Latencies (kind 5: from the OS, latency) between the objects of these
/// ids, row-major.
pub fn distances(objects: Vec<u32>, values: Vec<u64>) -> Distances {
    Distances {
        name: None,
        kind: 5,
        objects,
        values,
    }
}

/// A bandwidth (flags 5: higher is better, needs an initiator) of 1 for
/// the target of this id, with no initiator.
pub fn bandwidth(target: u32) -> Memattr {
    Memattr {
        name: "Bandwidth".into(),
        flags: 5,
        values: vec![MemattrValue {
            target,
            initiator: None,
            value: 1,
        }],
    }
}

/// A topology info.
pub fn info(name: impl Into<String>, value: impl Into<String>) -> Info {
    Info {
        name: name.into(),
        value: value.into(),
    }
}

/// What a read outside the grant got: `LEAKED` and the start of the
/// content, or the error in one word.
pub fn describe(r: &Result<Vec<u8>, files::FileError>) -> String {
    describe_read(r, "LEAKED", 40)
}

/// What a read got: `word`, the size and the first `shown` bytes, or the
/// error in one word.
pub fn describe_read(r: &Result<Vec<u8>, files::FileError>, word: &str, shown: usize) -> String {
    match r {
        Ok(bytes) => format!(
            "{word} {} bytes: {}",
            bytes.len(),
            String::from_utf8_lossy(&bytes[..bytes.len().min(shown)])
        ),
        Err(e) => describe_err(e),
    }
}

/// A file error in one word.
pub fn describe_err(e: &files::FileError) -> String {
    match e {
        files::FileError::NotFound => "not-found".into(),
        files::FileError::Denied => "denied".into(),
        files::FileError::TooLarge => "too-large".into(),
        files::FileError::Io(s) => format!("io: {s}"),
    }
}

/// A read inside the grant (`/sys/ok`), to show the grant itself works:
/// the info `control /sys/ok`.
pub fn control(d: &mut Discovery) {
    let r = files::read_many(&["/sys/ok".to_string()], 64);
    d.infos.push(info(
        "control /sys/ok",
        match &r[0] {
            Ok(b) => format!("read {}", String::from_utf8_lossy(b).trim()),
            Err(e) => describe_err(e),
        },
    ));
}

/// Tries to read, list and glob each path through the `files` import and
/// records every outcome as a topology info (`read P`, `list P`,
/// `glob P/*`).
pub fn probe(d: &mut Discovery, paths: &[&str]) {
    let owned: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    let results = files::read_many(&owned, 4096);
    for (p, r) in paths.iter().zip(&results) {
        d.infos.push(info(format!("read {p}"), describe(r)));
        let v = match files::list_dir(p) {
            Ok(names) => format!("LEAKED listing of {} entries", names.len()),
            Err(e) => describe_err(&e),
        };
        d.infos.push(info(format!("list {p}"), v));
        let v = match files::glob(&format!("{p}/*")) {
            Ok(names) if names.is_empty() => "no match".to_string(),
            Ok(names) => format!("LEAKED {} matches", names.len()),
            Err(e) => describe_err(&e),
        };
        d.infos.push(info(format!("glob {p}/*"), v));
    }
}

/// The small machine with the [`control`] read and the [`probe`] of each
/// path outside the grant: what the `read-*` components answer.
pub fn probe_outside_grant(paths: &[&str]) -> Discovery {
    let mut d = small();
    control(&mut d);
    probe(&mut d, paths);
    d
}

/// Records that attack the host's checking and building of a topology
/// (deep, wide, huge indexes, invalid trees), for `tests/hostile_records.rs`.
pub mod records {
    use super::*;

    /// A Group of these PUs (no parent unless given).
    pub fn group(id: u32, parent: Option<u32>, words: Vec<u64>, dont_merge: bool) -> Object {
        Object {
            cpuset: set(words),
            attr: ObjectAttr::Group(GroupAttr {
                kind: 0,
                subkind: 0,
                dont_merge,
            }),
            ..obj(id, parent, ObjectType::Group)
        }
    }

    /// A NUMA node of OS index `os`, over the PUs of `cpus`.
    pub fn node(id: u32, parent: Option<u32>, os: u32, cpus: Vec<u64>) -> Object {
        let mut words = vec![0u64; os as usize / 64 + 1];
        words[os as usize / 64] = 1 << (os % 64);
        Object {
            os_index: Some(os),
            nodeset: set(words),
            cpuset: set(cpus),
            ..obj(id, parent, ObjectType::NumaNode)
        }
    }

    /// A Machine with `n` PUs (ids 2.., OS indexes 0..).
    pub fn machine(n: u32) -> Discovery {
        let mut d = small();
        d.objects.truncate(1);
        for i in 0..n {
            d.objects.push(pu(2 + i, Some(1), i));
        }
        d
    }

    /// A Machine with one PU and a chain of `n` objects of one type, each
    /// the parent of the next (the first under the Machine).
    pub fn chain(type_: ObjectType, n: u32) -> Discovery {
        let mut d = small();
        let first = 10;
        for i in 0..n {
            let parent = if i == 0 { 1 } else { first + i - 1 };
            let mut o = obj(first + i, Some(parent), type_);
            if type_ == ObjectType::Group {
                o.cpuset = set(vec![1]);
            }
            d.objects.push(o);
        }
        d
    }

    /// The words of the PUs `0..n`.
    pub fn first_pus(n: u32) -> Vec<u64> {
        let mut w = vec![0u64; n.div_ceil(64) as usize];
        for i in 0..n {
            w[i as usize / 64] |= 1 << (i % 64);
        }
        w
    }
}
