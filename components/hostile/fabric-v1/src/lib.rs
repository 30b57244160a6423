//! A fabric reader of the first `fabric-reader` world
//! (`wloc:backend@0.1.0`), which the host still loads: it reads the files
//! the `files` setting names, each line `node ID KIND PORTS NAME...` or
//! `link SRC SRC-PORT DST DST-PORT GBPS WIDTH`, one snapshot per file.
//! It also tries to read a file it was not given, and fails if it can.

wit_bindgen::generate!({
    world: "fabric-reader",
    path: "../../../wit/backend@0.1.0",
});

use exports::fabric::{Guest, Link, Node, Snapshot};
use wloc::backend::{config, files};

struct V1;

fn num<T: std::str::FromStr>(s: Option<&str>, line: usize) -> Result<T, String> {
    s.and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("line {line}: expected a number"))
}

impl Guest for V1 {
    fn read() -> Result<Vec<Snapshot>, String> {
        if files::read_many(&["/etc/passwd".to_string()], 4096)[0].is_ok() {
            return Err("read /etc/passwd, which it was not given".into());
        }
        let list = config::get("files").ok_or("no `files` setting")?;
        let paths: Vec<String> = list.lines().map(String::from).collect();
        let mut out = Vec::new();
        for (path, r) in paths.iter().zip(files::read_many(&paths, 1 << 20)) {
            let text = String::from_utf8(r.map_err(|e| format!("{path}: {e:?}"))?)
                .map_err(|_| format!("{path}: not UTF-8"))?;
            let mut snap = Snapshot {
                subnet: path.rsplit('/').next().unwrap_or(path).to_string(),
                nodes: Vec::new(),
                links: Vec::new(),
            };
            for (i, l) in text.lines().enumerate() {
                let mut t = l.split_whitespace();
                match t.next() {
                    Some("node") => snap.nodes.push(Node {
                        id: t.next().unwrap_or_default().to_string(),
                        kind: t.next().unwrap_or_default().to_string(),
                        ports: num(t.next(), i + 1)?,
                        name: t.collect::<Vec<_>>().join(" "),
                    }),
                    Some("link") => snap.links.push(Link {
                        src: t.next().unwrap_or_default().to_string(),
                        src_port: num(t.next(), i + 1)?,
                        dst: t.next().unwrap_or_default().to_string(),
                        dst_port: num(t.next(), i + 1)?,
                        speed_gbps: num(t.next(), i + 1)?,
                        width: num(t.next(), i + 1)?,
                    }),
                    None => {}
                    Some(w) => return Err(format!("{path}:{}: unknown line {w:?}", i + 1)),
                }
            }
            out.push(snap);
        }
        Ok(out)
    }
}

export!(V1);
