//! `wloc diff OLD NEW [OUT]`: the difference between two XML topologies
//! as hwloc's diff document, as hwloc-diff computes and writes it.

use std::path::Path;

use clap::Args;
use wloc::xml::diff;

use super::topology::load_xml;

/// Options of `wloc diff`, named as hwloc-diff's.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Name the reference topology NAME in the diff (default: OLD without its directory).
    #[arg(long, value_name = "NAME")]
    refname: Option<String>,
    /// The reference topology (XML).
    old: String,
    /// The changed topology (XML).
    new: String,
    /// Write the diff to this file instead of standard output.
    out: Option<String>,
}

/// Runs `wloc diff`: exit 0 with the diff written, 1 when the change is
/// too complex for hwloc's format (nothing is written) or on failure.
pub fn run(a: &DiffArgs) -> super::Result {
    let old = load_xml(&a.old)?;
    let new = load_xml(&a.new)?;
    let found = diff::compute(&old, &new);
    let total = found.changes.len() + found.too_complex.len();
    let target = a.out.as_deref().unwrap_or("stdout");
    if let Some(first) = found.too_complex.first() {
        eprintln!(
            "Found {total} differences, including {} too complex ones.",
            found.too_complex.len()
        );
        return Err(format!(
            "the difference is too complex for hwloc's diff format (first: {}); nothing written to {target}",
            first.reason
        )
        .into());
    }
    let refname = match &a.refname {
        Some(r) => r.clone(),
        None => Path::new(&a.old)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.old.clone()),
    };
    let text = diff::to_xml(&found.changes, &refname);
    if total == 0 {
        eprintln!("Found no difference, exporting empty topology diff to {target}");
    } else {
        eprintln!("Found {total} differences, exporting to {target}");
    }
    match &a.out {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("cannot write '{p}': {e}"))?,
        // hwloc-diff ends its standard output with an empty line.
        None => super::print(&format!("{text}\n"))?,
    }
    Ok(())
}
