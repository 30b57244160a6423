//! `wloc diff OLD NEW [OUT]`: the difference between two XML topologies
//! as hwloc's diff document, as hwloc-diff computes and writes it, where
//! hwloc's format can express it; as wloc's own diff (every difference:
//! see `wloc_store::topodiff` for the format) where it cannot, or when
//! `--format wloc` asks for it.
//!
//! Exit codes: 0 the diff is written; 1 failure (unreadable input, or a
//! change too complex for hwloc's format with `--format hwloc`, when
//! nothing is written, as hwloc-diff); 2 bad command line.

use std::path::Path;

use clap::{Args, ValueEnum};
use wloc::xml::diff;
use wloc_store::topodiff;

use super::topology::load_xml;

/// Which diff format `wloc diff` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// hwloc's where it can express the change, wloc's otherwise.
    Auto,
    /// hwloc's only: a change it cannot express fails (exit 1), as hwloc-diff.
    Hwloc,
    /// wloc's own (every difference).
    Wloc,
}

/// Options of `wloc diff`, named as hwloc-diff's.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The diff format: auto (hwloc's where it can express the change, else wloc's), hwloc or wloc.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    format: Format,
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

/// Runs `wloc diff`.
pub fn run(a: &DiffArgs) -> super::Result {
    let old = load_xml(&a.old)?;
    let new = load_xml(&a.new)?;
    let found = diff::compute(&old, &new);
    let total = found.changes.len() + found.too_complex.len();
    let target = a.out.as_deref().unwrap_or("stdout");
    let rich = match a.format {
        Format::Wloc => true,
        Format::Auto => !found.too_complex.is_empty(),
        Format::Hwloc => false,
    };
    if rich {
        let old_doc = wloc::xml::export_canonical(&old);
        let new_doc = wloc::xml::export_canonical(&new);
        let mut d = topodiff::compute(&old_doc, &new_doc);
        d.refname = Some(refname(a));
        let text = topodiff::to_text(&d, &old_doc);
        eprintln!(
            "Found {} changed parts, exporting wloc's topology diff to {target}",
            d.hunks.len()
        );
        match &a.out {
            Some(p) => wloc::files::write(std::path::Path::new(p), text.as_bytes())?,
            None => super::print(&text)?,
        }
        return Ok(());
    }
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
    let text = diff::to_xml(&found.changes, &refname(a));
    if total == 0 {
        eprintln!("Found no difference, exporting empty topology diff to {target}");
    } else {
        eprintln!("Found {total} differences, exporting to {target}");
    }
    match &a.out {
        Some(p) => wloc::files::write(std::path::Path::new(p), text.as_bytes())?,
        // hwloc-diff ends its standard output with an empty line.
        None => super::print(&format!("{text}\n"))?,
    }
    Ok(())
}

/// `--refname`, or OLD without its directory.
fn refname(a: &DiffArgs) -> String {
    match &a.refname {
        Some(r) => r.clone(),
        None => Path::new(&a.old)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.old.clone()),
    }
}
