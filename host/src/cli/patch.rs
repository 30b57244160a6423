//! `wloc patch [-R] OLD|refname DIFF [OUT]`: apply an hwloc topology diff
//! to an XML topology, as hwloc-patch does.

use std::io::Read;

use clap::Args;
use wloc::xml::{diff, XmlVersion};

use super::topology::load_xml;

/// Options of `wloc patch`, named as hwloc-patch's.
#[derive(Args, Debug)]
pub struct PatchArgs {
    /// Apply the diff backwards (from its new topology to its old one).
    #[arg(short = 'R', long)]
    reverse: bool,
    /// The topology to patch (XML), or `refname` for the file the diff's refname names.
    old: String,
    /// The diff (hwloc's diff XML), or `-` for standard input.
    diff: String,
    /// Write the patched topology (hwloc 2 XML) here; without it, OLD is changed in place.
    out: Option<String>,
}

/// Runs `wloc patch`.
pub fn run(a: &PatchArgs) -> super::Result {
    let text = if a.diff == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the diff from standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(&a.diff)
            .map_err(|e| format!("cannot read the diff '{}': {e}", a.diff))?
    };
    let name = if a.diff == "-" { "<stdin>" } else { &a.diff };
    let d = diff::parse(&text)
        .map_err(|e| format!("'{name}' is not a valid hwloc topology diff: {e}"))?;
    let old = if a.old == "refname" {
        match &d.refname {
            Some(r) if !r.is_empty() => r.clone(),
            _ => {
                return Err(format!("the diff '{name}' has no refname to find its topology").into())
            }
        }
    } else {
        a.old.clone()
    };
    let mut topo = load_xml(&old).map_err(|e| {
        if a.old == "refname" {
            format!("{e} (the refname of the diff '{name}')")
        } else {
            e
        }
    })?;
    diff::apply(&mut topo, &d.changes, a.reverse)
        .map_err(|e| format!("cannot apply the diff '{name}' to '{old}': {e}"))?;
    let xml = wloc::xml::export(&topo, XmlVersion::V2);
    let out = a.out.as_deref().unwrap_or(&old);
    std::fs::write(out, xml).map_err(|e| format!("cannot write '{out}': {e}"))?;
    Ok(())
}
