//! wloc's built-in InfiniBand fabric reader (world `fabric-reader` of
//! `wloc:fabric@0.2.0`).
//!
//! The host names the files to read in the `files` setting (one path a
//! line) and grants read access to exactly those files; the component
//! reads them through the `files` import, parses them with `wloc-ib` and
//! returns the subnets.  Errors name the file and the line.

wit_bindgen::generate!({
    world: "fabric-reader",
    path: "../../wit/fabric@0.2.0",
    generate_all,
});

use exports::wloc::fabric::reader::{
    End, Guest, Link, Node, NodeKind, Port, RouteEntry, RouteTable, Speed, Subnet,
};
use wloc::backend::{config, files, log};

/// Largest file read (a ports report of 100,000 ports is about 15 MiB).
/// One byte more is asked for, so that a longer file is seen as such.
const MAX_FILE: u32 = 64 << 20;

struct Reader;

fn speed(s: Option<wloc_ib::Speed>) -> Option<Speed> {
    use wloc_ib::Speed as S;
    s.map(|s| match s {
        S::Sdr => Speed::Sdr,
        S::Ddr => Speed::Ddr,
        S::Qdr => Speed::Qdr,
        S::Fdr10 => Speed::Fdr10,
        S::Fdr => Speed::Fdr,
        S::Edr => Speed::Edr,
        S::Hdr => Speed::Hdr,
        S::Ndr => Speed::Ndr,
        S::Xdr => Speed::Xdr,
    })
}

fn kind(k: wloc_ib::NodeKind) -> NodeKind {
    match k {
        wloc_ib::NodeKind::Switch => NodeKind::Switch,
        wloc_ib::NodeKind::Ca => NodeKind::Ca,
        wloc_ib::NodeKind::Router => NodeKind::Router,
    }
}

fn end(e: wloc_ib::End) -> End {
    End {
        node: e.node,
        port: e.port,
    }
}

fn subnet(s: wloc_ib::Subnet) -> Subnet {
    Subnet {
        name: s.name,
        nodes: s
            .nodes
            .into_iter()
            .map(|n| Node {
                guid: n.guid,
                kind: kind(n.kind),
                description: n.description,
                ports: n
                    .ports
                    .into_iter()
                    .map(|p| Port {
                        number: p.number,
                        guid: p.guid,
                        lid: p.lid,
                        width: p.width,
                        speed: speed(p.speed),
                    })
                    .collect(),
            })
            .collect(),
        links: s
            .links
            .into_iter()
            .map(|l| Link {
                a: end(l.a),
                b: end(l.b),
                width: l.width,
                speed: speed(l.speed),
            })
            .collect(),
        routes: s
            .routes
            .into_iter()
            .map(|t| RouteTable {
                switch: t.switch,
                lid: t.lid,
                entries: t
                    .entries
                    .into_iter()
                    .map(|e| RouteEntry {
                        lid: e.lid,
                        port: e.port,
                        dest: e.dest,
                        line: u32::try_from(e.line).unwrap_or(u32::MAX),
                    })
                    .collect(),
            })
            .collect(),
    }
}

impl Guest for Reader {
    fn read() -> Result<Vec<Subnet>, String> {
        let list = config::get("files").ok_or("no files to read (setting `files`)")?;
        let paths: Vec<String> = list
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if paths.is_empty() {
            return Err("no files to read (setting `files` is empty)".into());
        }
        let mut texts = Vec::with_capacity(paths.len());
        for (path, r) in paths.iter().zip(files::read_many(&paths, MAX_FILE + 1)) {
            let bytes = r.map_err(|e| format!("{path}: cannot read it: {e:?}"))?;
            if bytes.len() as u64 > u64::from(MAX_FILE) {
                return Err(format!("{path}: larger than {} MiB", MAX_FILE >> 20));
            }
            // The host cuts files at its own limit (1 MiB unless the
            // run's limits say more): a text that does not end a line
            // there was cut, or is truncated.
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                let line = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
                return Err(format!(
                    "{path}:{line}: the last line is cut (a truncated file, or one longer than the read limit of {} bytes)",
                    bytes.len()
                ));
            }
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                format!("{path}:{line}: not UTF-8 text")
            })?;
            texts.push((path.clone(), text));
        }
        let (subnets, damaged) = wloc_ib::read_files(&texts).map_err(|e| e.to_string())?;
        for w in damaged {
            log::log(log::Level::Warning, &w.to_string());
        }
        Ok(subnets.into_iter().map(subnet).collect())
    }
}

export!(Reader);
