//! `wloc patch [-R] OLD|refname DIFF [OUT]`: apply a topology diff to an
//! XML topology, as hwloc-patch does: hwloc's diff XML, or wloc's own diff
//! (`wloc_store::topodiff`), told apart by their first line. wloc's diffs
//! apply to the canonical document of OLD (what `wloc ls --of xml`
//! writes) and give the new one byte for byte; either kind is applied
//! whole or not at all, and a refusal names the first change that does
//! not fit.
//!
//! Exit codes: 0 applied and written; 1 failure (unreadable input, a diff
//! that does not apply: nothing is written); 2 bad command line.

use std::path::Path;

use clap::Args;
use wloc::xml::{XmlVersion, diff};
use wloc_store::topodiff;

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
    let text = wloc::files::read_text_arg(&a.diff, "the diff")?;
    let name = if a.diff == "-" { "<stdin>" } else { &a.diff };
    if topodiff::is_rich(&text) {
        return patch_rich(a, &text, name);
    }
    let d = diff::parse(&text)
        .map_err(|e| format!("'{name}' is not a valid hwloc topology diff: {e}"))?;
    let old = reference(a, d.refname.as_deref(), name)?;
    let mut topo = load_xml(&old).map_err(|e| {
        if a.old == "refname" {
            format!("{e} (the refname of the diff '{name}')")
        } else {
            e.to_string()
        }
    })?;
    // hwloc 1.x diffs number depths as their 1.x reference does.
    let reference = wloc::files::read_text(Path::new(&old), "the topology")?;
    diff::apply_with_reference(&reference, &mut topo, &text, &d.changes, a.reverse)
        .map_err(|e| format!("cannot apply the diff '{name}' to '{old}': {e}"))?;
    let xml = super::ls::export_xml(&topo, XmlVersion::V2)?;
    let out = a.out.as_deref().unwrap_or(&old);
    wloc::files::write(Path::new(out), xml.as_bytes())?;
    Ok(())
}

/// The topology a diff applies to: the one named on the command line, or
/// with `refname`, the one the diff names.
fn reference(a: &PatchArgs, refname: Option<&str>, name: &str) -> super::Result<String> {
    if a.old != "refname" {
        return Ok(a.old.clone());
    }
    match refname {
        Some(r) if !r.is_empty() => Ok(r.to_string()),
        _ => Err(format!("the diff '{name}' has no refname to find its topology").into()),
    }
}

/// Applies wloc's own diff.
fn patch_rich(a: &PatchArgs, text: &str, name: &str) -> super::Result {
    let d = topodiff::parse(text)
        .map_err(|e| format!("'{name}' is not a valid wloc topology diff: {e}"))?;
    let old = reference(a, d.refname.as_deref(), name)?;
    let doc = wloc::xml::export_canonical(&load_xml(&old)?);
    let new = topodiff::apply(&doc, &d, a.reverse)
        .map_err(|e| format!("cannot apply the diff '{name}' to '{old}': {e}"))?;
    // What the diff gives must still be a topology.
    super::topology::check_xml(&new).map_err(|e| {
        format!("applying the diff '{name}' to '{old}' does not give a valid topology: {e}")
    })?;
    let out = a.out.as_deref().unwrap_or(&old);
    wloc::files::write(Path::new(out), new.as_bytes())?;
    Ok(())
}
