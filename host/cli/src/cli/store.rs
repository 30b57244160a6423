//! Many topologies: `wloc compress-dir IN OUT` and `wloc uncompress-dir
//! IN OUT` (`compress-dir -R`) keep hwloc-compress-dir's contract: a
//! directory of `NAME.xml` files (kept whole) and `NAME.diff.xml` files
//! (hwloc topology diffs naming their reference in `refname`), which
//! hwloc's tools read. `wloc store pack|list|get|time` keeps many
//! topologies in one file of wloc's store format (the `wloc-store` crate).
//!
//! Exit codes: 0 done, 1 any failure (told on standard error), 2 bad
//! command line. As hwloc-compress-dir, `compress-dir` keeps a file it
//! cannot load whole (with a warning), `-R` tells a diff it cannot apply on
//! standard error and still exits 0. `store pack` skips a file it finds in
//! a directory that is not a topology wloc can load, with a warning naming
//! the file and why; a file named on its command line must load (exit 1
//! otherwise), and so must at least one file.

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wloc_store::{Prepared, Store, pack_prepared};

use super::topology::load_xml;
use wloc::folder::Folder;

/// The store file earlier versions of `compress-dir` wrote into an
/// existing output directory; `uncompress-dir` still reads it.
pub const DIR_STORE: &str = "topologies.wstore";

/// The canonical document of an XML topology: what `wloc ls --of xml`
/// writes of it (every object kept).
pub fn canonical(path: &str) -> super::Result<String> {
    Ok(wloc::xml::export_canonical(&load_xml(path)?))
}

fn bar(len: usize, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len as u64);
    b.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b.set_message(what.to_string());
    b
}

/// A file to store: its name in the store, its path, and whether it was
/// found in a directory (then it is skipped, with a warning, if it is not
/// a topology).
struct Input {
    name: String,
    path: PathBuf,
    in_dir: bool,
    /// For a file found in a directory, its text, read through the
    /// directory's handle (or why it could not be).
    text: Option<Result<String, wloc::folder::FolderError>>,
}

/// The files of the inputs: files as given, directories' regular files
/// (hwloc-compress-dir takes every file of its input directory).
fn input_files(inputs: &[String]) -> super::Result<Vec<Input>> {
    let mut files = Vec::new();
    for i in inputs {
        let p = Path::new(i);
        if p.is_dir() {
            let folder = Folder::open(p)?;
            let rd = std::fs::read_dir(p)
                .map_err(|e| format!("cannot read the directory '{i}': {e}"))?;
            for e in rd {
                let e = e.map_err(|e| format!("cannot read the directory '{i}': {e}"))?;
                let path = e.path();
                if path.is_file() {
                    // A store's names are UTF-8: a file named otherwise is
                    // skipped (told) rather than stored under another name.
                    let Some(name) = e.file_name().to_str().map(str::to_string) else {
                        eprintln!(
                            "wloc: warning: skipping '{}': its name is not UTF-8, which names in a store are",
                            path.display()
                        );
                        continue;
                    };
                    // Read now, through the folder: a link out of it is
                    // skipped (with a warning), as is what is not a file.
                    let text = match folder.read_text(Path::new(&e.file_name())) {
                        Ok(Some(t)) => Ok(t),
                        Ok(None) => continue,
                        Err(e) => Err(e),
                    };
                    files.push(Input {
                        name,
                        path,
                        in_dir: true,
                        text: Some(text),
                    });
                }
            }
        } else if p.is_file() {
            let name = p
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| i.clone());
            files.push(Input {
                name,
                path: p.to_path_buf(),
                in_dir: false,
                text: None,
            });
        } else {
            return Err(format!("'{i}' is neither a file nor a directory").into());
        }
    }
    if files.is_empty() {
        return Err("no topology to store: the inputs hold no file".into());
    }
    Ok(files)
}

/// Loads every file, makes it canonical and prepares it for the store
/// (on all CPUs, each file on its own: the result does not depend on the
/// order of the files or the number of threads), then packs them;
/// returns the store and the number of files skipped.
fn pack_files(
    files: Vec<Input>,
    verbose: bool,
) -> super::Result<(Vec<u8>, wloc_store::PackStats, usize)> {
    let n = files.len();
    let t_load = Instant::now();
    let b = bar(n, "loading");
    let workers = std::thread::available_parallelism()
        .map_or(1, |w| w.get())
        .min(n);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut docs: Vec<Option<super::Result<Prepared>>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        let doc = match &files[i].text {
                            Some(Ok(t)) => {
                                load_xml_text(t).map(|t| wloc::xml::export_canonical(&t))
                            }
                            // The error is reported where it is stored.
                            Some(Err(e)) => Err(super::Error::Message(e.to_string())),
                            None => canonical(&files[i].path.to_string_lossy()),
                        };
                        got.push((i, doc.map(|d| wloc_store::store::prepare(&d))));
                        b.inc(1);
                    }
                    got
                })
            })
            .collect();
        for h in handles {
            for (i, d) in h.join().expect("a loading thread panicked") {
                docs[i] = Some(d);
            }
        }
    });
    b.finish_and_clear();
    let mut nodes = Vec::with_capacity(n);
    let mut skipped = 0;
    for (f, d) in files.into_iter().zip(docs) {
        match d.expect("every file was loaded") {
            Ok(p) => nodes.push((f.name, p)),
            Err(e) if f.in_dir => {
                skipped += 1;
                b.suspend(|| {
                    eprintln!(
                        "wloc: warning: skipping '{}': not a topology wloc can load: {e}",
                        f.path.display()
                    )
                });
            }
            Err(e) => return Err(e),
        }
    }
    if nodes.is_empty() {
        return Err(format!(
            "no topology to store: none of the {n} files is a topology wloc can load"
        )
        .into());
    }
    let t_pack = Instant::now();
    if verbose {
        eprintln!(
            "loaded, made canonical and prepared in {:.2} s",
            t_load.elapsed().as_secs_f64()
        );
    }
    let b = bar(nodes.len(), "packing");
    let (data, stats) =
        pack_prepared(nodes, |done| b.set_position(done as u64)).map_err(|e| e.to_string())?;
    if verbose {
        eprintln!("packed in {:.2} s", t_pack.elapsed().as_secs_f64());
    }
    b.finish_and_clear();
    Ok((data, stats, skipped))
}

/// The topology of the XML document `text` (as `load_xml` loads a file).
fn load_xml_text(text: &str) -> super::Result<wloc_core::Topology> {
    let mut t = super::topology::keep_all(wloc_core::TypeFilter::KeepAll);
    t.include_disallowed = true;
    Ok(wloc::xml::import_str(text, t).map_err(|e| e.to_string())?)
}

/// Writes the old file or the complete new one ([`wloc::files::write`]).
fn write(path: &Path, data: &[u8]) -> super::Result {
    Ok(wloc::files::write(path, data)?)
}

// ------------------------------------------------------------ compress-dir

/// Options of `wloc compress-dir`, named as hwloc-compress-dir's.
#[derive(Args, Debug)]
pub struct CompressDirArgs {
    /// Uncompress instead of compressing (as `wloc uncompress-dir IN OUT`).
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Display verbose messages.
    #[arg(short, long)]
    verbose: bool,
    /// The directory of XML topologies (`NAME.xml`, one per node; other files are ignored).
    input: String,
    /// The directory to write `NAME.xml` (kept whole) and `NAME.diff.xml` (hwloc topology diffs) into; made if missing.
    output: String,
}

/// A full topology of the output directory that later files may be
/// diffed against: its file name (the diffs' `refname`) and its
/// topology once loaded (`None`: wloc cannot load it, never a reference).
struct Reference {
    file: OsString,
    topo: Option<wloc_core::Topology>,
}

/// The regular files of `dir`, sorted by name (as `ls -1`, which
/// hwloc-compress-dir goes through); names are kept as bytes.
fn sorted_files(dir: &Path) -> super::Result<Vec<OsString>> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the directory '{}': {e}", dir.display()))?;
    let mut names = Vec::new();
    for e in rd {
        let e = e.map_err(|e| format!("cannot read the directory '{}': {e}", dir.display()))?;
        if e.path().is_file() {
            names.push(e.file_name());
        }
    }
    names.sort();
    Ok(names)
}

/// `name` without `suffix`, as bytes.
fn strip(name: &OsStr, suffix: &str) -> Option<OsString> {
    name.as_bytes()
        .strip_suffix(suffix.as_bytes())
        .map(|b| OsStr::from_bytes(b).to_owned())
}

/// `name` followed by `suffix`, as bytes.
fn with_suffix(name: &OsStr, suffix: &str) -> OsString {
    let mut s = name.to_owned();
    s.push(suffix);
    s
}

/// Whether the file `path` of the output folder is a topology wloc can
/// load: what a rerun checks before it counts an output as done (a file
/// an older run left empty or cut is made again).
fn complete_topology(path: &Path) -> bool {
    wloc::files::read_text(path, "the output")
        .ok()
        .is_some_and(|t| load_xml_text(&t).is_ok())
}

/// Whether the diff `path` of the output folder is whole: it parses, and
/// the reference it names is in the output folder.
fn complete_diff(out: &Path, path: &Path) -> bool {
    let Ok(text) = wloc::files::read_text(path, "the output") else {
        return false;
    };
    wloc::xml::diff::parse(&text).is_ok_and(|d| {
        d.refname
            .filter(|r| !r.is_empty() && !r.contains('/'))
            .is_some_and(|r| out.join(r).is_file())
    })
}

/// The output directory, made if missing (hwloc-compress-dir needs it to
/// exist); an existing non-directory is an error.
fn output_dir(output: &str) -> super::Result<PathBuf> {
    let out = PathBuf::from(output);
    if out.exists() && !out.is_dir() {
        return Err(format!("cannot enter output directory '{output}': not a directory").into());
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| format!("cannot make the output directory '{output}': {e}"))?;
    Ok(out)
}

/// The `<userdata>` of every object of `t`, in document order.
fn userdata_in_order(t: &wloc::model::Topology) -> Vec<&[wloc::model::UserData]> {
    let mut out = Vec::new();
    let mut stack = vec![t.root()];
    while let Some(id) = stack.pop() {
        let o = t.obj(id);
        out.push(o.userdata.as_slice());
        let children = o
            .memory_children()
            .iter()
            .chain(o.children())
            .chain(o.io_children())
            .chain(o.misc_children());
        stack.extend(children.rev());
    }
    out
}

/// Runs `wloc compress-dir`: hwloc-compress-dir's layout and messages.
/// Every `NAME.xml` of IN not already in OUT (as `NAME.xml` or
/// `NAME.diff.xml`) becomes `OUT/NAME.diff.xml`, an hwloc topology diff
/// against a full topology of OUT (its `refname`), when hwloc's diff format
/// can express the difference, else a copy `OUT/NAME.xml` that later files
/// may be diffed against. Where hwloc takes the first reference that
/// works, wloc takes the one with the fewest changes.
pub fn compress_dir(a: &CompressDirArgs) -> super::Result {
    if a.reverse {
        return uncompress(&a.input, &a.output, a.verbose);
    }
    let inp = Path::new(&a.input);
    if !inp.is_dir() {
        return Err(format!("'{}' is not a directory", a.input).into());
    }
    let out = output_dir(&a.output)?;
    let folder = Folder::open(inp)?;
    let existing = sorted_files(&out)?;
    // Only a name that is text can be a diff's refname.
    let mut refs: Vec<Reference> = existing
        .iter()
        .filter(|f| f.to_str().is_some())
        .filter(|f| strip(f, ".xml").is_some() && strip(f, ".diff.xml").is_none())
        .filter(|f| {
            let name = strip(f, ".xml").unwrap_or_default();
            !existing.contains(&with_suffix(&name, ".diff.xml"))
        })
        .map(|f| Reference {
            file: f.clone(),
            topo: wloc::files::read_text(&out.join(f), "the output")
                .ok()
                .and_then(|t| load_xml_text(&t).ok()),
        })
        .collect();
    let (mut already_c, mut already_nc, mut new_c, mut new_nc) = (0, 0, 0, 0);
    let mut bytes_in = 0u64;
    let mut bytes_out = 0u64;
    let t = Instant::now();
    for input in sorted_files(inp)? {
        let shown_input = input.to_string_lossy().into_owned();
        let Some(name) = strip(&input, ".xml") else {
            if a.verbose {
                println!("Ignoring non-XML file {shown_input}");
            }
            continue;
        };
        let name_shown = name.to_string_lossy().into_owned();
        // A rerun checks what it finds: an output that does not load (left
        // empty or cut by an older run) is made again.
        let whole = out.join(&input);
        if whole.exists() {
            // Whole means loadable, or the same bytes as the input (a file
            // wloc cannot load is kept whole as it is).
            let same = || {
                let copy = wloc::files::read(&whole, "the output", wloc::files::MAX_BYTES).ok();
                copy.is_some() && folder.read(Path::new(&input)).ok().flatten() == copy
            };
            if complete_topology(&whole) || same() {
                if a.verbose {
                    println!("{name_shown} already non-compressed, skipping");
                }
                already_nc += 1;
                continue;
            }
            eprintln!(
                "wloc: warning: '{}' is not a whole topology; writing it again",
                whole.display()
            );
            refs.retain(|r| r.file != input);
        }
        let diff_file = with_suffix(&name, ".diff.xml");
        if out.join(&diff_file).exists() {
            if complete_diff(&out, &out.join(&diff_file)) {
                if a.verbose {
                    println!("{name_shown} already compressed, skipping");
                }
                already_c += 1;
                continue;
            }
            eprintln!(
                "wloc: warning: '{}' is not a whole diff; writing it again",
                out.join(&diff_file).display()
            );
        }
        // Read through the folder: a link out of it is skipped (warned).
        let Some(bytes) = folder.read(Path::new(&input))? else {
            continue;
        };
        let path = inp.join(&input);
        bytes_in += bytes.len() as u64;
        let text =
            String::from_utf8(bytes.clone()).map_err(|_| super::Error::from("not UTF-8 text"));
        let topo = match text.and_then(|t| load_xml_text(&t)) {
            Ok(t) => Some(t),
            Err(e) => {
                // hwloc-compress-dir keeps such a file whole (every diff
                // against it fails); so does wloc, and says why.
                eprintln!(
                    "wloc: warning: '{}' is not a topology wloc can load, kept whole: {e}",
                    path.display()
                );
                None
            }
        };
        let best = topo.as_ref().and_then(|new| {
            let mut best: Option<(usize, Vec<wloc::xml::diff::Change>)> = None;
            for (i, r) in refs.iter().enumerate() {
                let Some(old) = &r.topo else { continue };
                let found = wloc::xml::diff::compute(old, new);
                // hwloc's diffs do not carry <userdata>: a topology is only
                // diffed against a reference with the same userdata, else it
                // would come back with the reference's.
                if !found.too_complex.is_empty() || userdata_in_order(old) != userdata_in_order(new)
                {
                    continue;
                }
                if best
                    .as_ref()
                    .is_none_or(|(_, c)| found.changes.len() < c.len())
                {
                    let done = found.changes.is_empty();
                    best = Some((i, found.changes));
                    if done {
                        break;
                    }
                }
            }
            best
        });
        match best {
            Some((i, changes)) => {
                let refname = refs[i].file.to_string_lossy().into_owned();
                let text = wloc::xml::diff::to_xml(&changes, &refname);
                write(&out.join(&diff_file), text.as_bytes())?;
                // A whole copy left by an earlier run would shadow the diff.
                if whole.exists() {
                    let _ = std::fs::remove_file(&whole);
                }
                bytes_out += text.len() as u64;
                println!(
                    "Compressed {name_shown} on top of {}",
                    refname.trim_end_matches(".xml")
                );
                new_c += 1;
            }
            None => {
                // Kept byte for byte, as hwloc-compress-dir copies it (but
                // made with wloc's own mode, not the source's).
                let target = out.join(&input);
                write(&target, &bytes)?;
                let _ = std::fs::remove_file(out.join(&diff_file));
                bytes_out += bytes.len() as u64;
                println!("Could not compress {name_shown}, keeping non-compressed");
                new_nc += 1;
                // A name that is not text cannot be a diff's refname.
                if input.to_str().is_some() {
                    let at = refs.partition_point(|r| r.file < input);
                    refs.insert(
                        at,
                        Reference {
                            file: input.clone(),
                            topo,
                        },
                    );
                }
            }
        }
    }
    println!("Compressed {new_c} new topologies ({already_c} were already compressed)");
    println!(
        "Kept {new_nc} new topologies non-compressed ({already_nc} were already non-compressed)"
    );
    if a.verbose {
        eprintln!(
            "{bytes_in} bytes in, {bytes_out} bytes written, in {:.2} s",
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

// ------------------------------------------------------------ uncompress-dir

/// Options of `wloc uncompress-dir`.
#[derive(Args, Debug)]
pub struct UncompressDirArgs {
    /// Display verbose messages.
    #[arg(short, long)]
    verbose: bool,
    /// A directory `compress-dir` (wloc's or hwloc's) made; or a `wloc store` file (or a directory holding topologies.wstore).
    input: String,
    /// The directory to write one XML file per topology into (made if missing).
    output: String,
}

/// Runs `wloc uncompress-dir` (= `wloc compress-dir -R`).
pub fn uncompress_dir(a: &UncompressDirArgs) -> super::Result {
    uncompress(&a.input, &a.output, a.verbose)
}

fn uncompress(input: &str, output: &str, verbose: bool) -> super::Result {
    let inp = Path::new(input);
    let version = super::ls::default_xml_version()?;
    let store = if inp.is_dir() {
        inp.join(DIR_STORE)
    } else {
        inp.to_path_buf()
    };
    if inp.is_dir() && !store.exists() {
        let out = output_dir(output)?;
        return uncompress_hwloc(inp, &out, verbose, version);
    }
    if !store.is_file() {
        return Err(format!("'{input}' is neither a directory nor a store file").into());
    }
    let out = output_dir(output)?;
    let mut s = Store::open(&store).map_err(|e| e.to_string())?;
    let entries = s.entries().map_err(|e| e.to_string())?;
    let b = bar(entries.len(), "uncompressing");
    for e in &entries {
        let name = &e.name;
        let text = user_xml(&s.get_entry(e).map_err(|e| e.to_string())?, version)?;
        let target = safe_join(&out, name)?;
        write(&target, text.as_bytes())?;
        if verbose {
            b.suspend(|| eprintln!("{name}"));
        }
        b.inc(1);
    }
    b.finish_and_clear();
    eprintln!("Uncompressed {} topologies into {output}", entries.len());
    Ok(())
}

/// A store's canonical document (hwloc 3.0 XML with page types) as users
/// get it: hwloc 2.x XML unless `WLOC_XML_VERSION` asks for 3.
fn user_xml(canonical: &str, version: wloc::xml::XmlVersion) -> super::Result<String> {
    if version == wloc::xml::XmlVersion::V3 {
        return Ok(canonical.to_string());
    }
    let mut t = super::topology::keep_all(wloc_core::TypeFilter::KeepAll);
    t.include_disallowed = true;
    let topo = wloc::xml::import_str(canonical, t)
        .map_err(|e| format!("corrupt topology store: a stored document does not load: {e}"))?;
    super::ls::export_xml(&topo, version)
}

/// `out/name`, refusing names that would leave `out` (a corrupt or
/// hostile store).
fn safe_join(out: &Path, name: &str) -> super::Result<PathBuf> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(
            format!("the store holds a topology named '{name}', which is not a file name").into(),
        );
    }
    Ok(out.join(name))
}

/// What hwloc-compress-dir -R does: `NAME.xml` files are copied,
/// `NAME.diff.xml` files applied to the topology their refname names
/// (looked up among IN's full files first, whatever the order of the
/// files, then in OUT as hwloc does), names already in OUT are skipped. A
/// diff that cannot be applied is told on standard error and the others
/// go on: the exit code is 0, as hwloc's.
fn uncompress_hwloc(
    inp: &Path,
    out: &Path,
    verbose: bool,
    version: wloc::xml::XmlVersion,
) -> super::Result {
    use wloc::xml::diff;
    let folder = Folder::open(inp)?;
    let files = sorted_files(inp)?;
    let (mut new_u, mut new_nc, mut already) = (0, 0, 0);
    // Each reference, loaded and as text (hwloc 1.x diffs number depths
    // as their 1.x reference does).
    let mut refs: std::collections::HashMap<String, (wloc_core::Topology, String)> =
        Default::default();
    for input in &files {
        let (name, is_diff) = match strip(input, ".diff.xml") {
            Some(n) => (n, true),
            None => match strip(input, ".xml") {
                Some(n) => (n, false),
                None => {
                    if verbose {
                        println!(
                            "Ignoring non-XML and non-diff-XML file {}",
                            input.to_string_lossy()
                        );
                    }
                    continue;
                }
            },
        };
        let name_shown = name.to_string_lossy().into_owned();
        let target = out.join(with_suffix(&name, ".xml"));
        // A rerun checks what it finds: a file that does not load (left
        // empty or cut by an older run) is made again.
        if target.exists() {
            if complete_topology(&target) {
                if verbose {
                    println!("{name_shown} already uncompressed, skipping");
                }
                already += 1;
                continue;
            }
            eprintln!(
                "wloc: warning: '{}' is not a whole topology; writing it again",
                target.display()
            );
        }
        let path = inp.join(input);
        if !is_diff {
            // Through the folder (a link out of it is skipped, warned),
            // written with wloc's own mode, not the source's.
            let Some(bytes) = folder.read(Path::new(input))? else {
                continue;
            };
            write(&target, &bytes)?;
            println!("Copied {name_shown}, wasn't compressed");
            new_nc += 1;
            continue;
        }
        let patched = (|| -> super::Result<String> {
            let text = folder
                .read_text(Path::new(input))?
                .ok_or("it was skipped")?;
            let d =
                diff::parse(&text).map_err(|e| format!("not a valid hwloc topology diff: {e}"))?;
            let r = d
                .refname
                .clone()
                .filter(|r| !r.is_empty())
                .ok_or("the diff names no reference topology (refname)")?;
            if !refs.contains_key(&r) {
                // A reference in IN is read through the folder; one in OUT
                // (the user's output folder) where it is.
                let ref_text = if files.iter().any(|f| f.as_os_str() == OsStr::new(&r))
                    && !r.ends_with(".diff.xml")
                {
                    folder
                        .read_text(Path::new(&r))?
                        .ok_or_else(|| format!("its reference '{r}' was skipped"))?
                } else {
                    wloc::files::read_text(&safe_join(out, &r)?, "its reference")?
                };
                let t = load_xml_text(&ref_text)
                    .map_err(|e| format!("cannot load its reference '{r}': {e}"))?;
                refs.insert(r.clone(), (t, ref_text));
            }
            let (reference, ref_text) = &refs[&r];
            let mut topo = reference.clone();
            diff::apply_with_reference(ref_text, &mut topo, &text, &d.changes, false)
                .map_err(|e| format!("cannot apply it to '{r}': {e}"))?;
            super::ls::export_xml(&topo, version)
        })();
        match patched {
            Ok(text) => {
                write(&target, text.as_bytes())?;
                println!("Uncompressed {name_shown}");
                new_u += 1;
            }
            Err(e) => eprintln!("Failed to uncompress {}: {e}", path.display()),
        }
    }
    println!(
        "Uncompressed {new_u} new topologies, copied {new_nc} non-compressed topologies ({already} were already uncompressed)"
    );
    Ok(())
}

// ------------------------------------------------------------ store

/// Options of `wloc store`.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    action: StoreAction,
}

#[derive(Subcommand, Debug)]
enum StoreAction {
    /// Store XML topologies (files, or every file of directories) in one file.
    Pack {
        /// The store to write.
        #[arg(short, long, value_name = "FILE")]
        output: String,
        /// XML topologies, or directories of them.
        #[arg(required = true)]
        inputs: Vec<String>,
    },
    /// List the topologies of a store: name, XML size, reference.
    List {
        /// The store.
        store: String,
    },
    /// Write one topology of a store to standard output or a file: hwloc 2.x XML, or 3.0 with WLOC_XML_VERSION=3.
    Get {
        /// The store.
        store: String,
        /// The topology's name (with or without `.xml`).
        name: String,
        /// Write it here instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<String>,
    },
    /// Time opening the store and getting one topology, for SAMPLES topologies spread over it.
    Time {
        /// The store.
        store: String,
        /// How many topologies to get.
        #[arg(long, default_value_t = 200)]
        samples: usize,
    },
}

/// Runs `wloc store`.
pub fn store(a: &StoreArgs) -> super::Result {
    match &a.action {
        StoreAction::Pack { output, inputs } => {
            let (data, stats, skipped) = pack_files(input_files(inputs)?, false)?;
            write(Path::new(output), &data)?;
            eprintln!(
                "Stored {} topologies in {output} ({} bytes, {} references)",
                stats.nodes, stats.bytes, stats.references
            );
            if skipped > 0 {
                eprintln!("Skipped {skipped} files that are not topologies (named above)");
            }
            Ok(())
        }
        StoreAction::List { store } => {
            let mut s = Store::open(Path::new(store)).map_err(|e| e.to_string())?;
            let mut text = String::new();
            for e in s.entries().map_err(|e| e.to_string())? {
                text.push_str(&format!("{}\t{}\t{}\n", e.name, e.size, e.reference));
            }
            super::print(&text)
        }
        StoreAction::Get {
            store,
            name,
            output,
        } => {
            let mut s = Store::open(Path::new(store)).map_err(|e| e.to_string())?;
            let text = s.get(name).map_err(|e| format!("'{store}': {e}"))?;
            let text = user_xml(&text, super::ls::default_xml_version()?)?;
            match output {
                Some(o) => Ok(write(Path::new(o), text.as_bytes())?),
                None => super::print(&text),
            }
        }
        StoreAction::Time { store, samples } => {
            let names: Vec<String> = Store::open(Path::new(store))
                .map_err(|e| e.to_string())?
                .entries()
                .map_err(|e| e.to_string())?
                .iter()
                .map(|e| e.name.clone())
                .collect();
            let n = (*samples).clamp(1, names.len().max(1));
            let (mut wall, mut cpu) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for k in 0..n {
                let name = &names[k * names.len() / n];
                let (t, c) = (Instant::now(), thread_cpu_ms());
                // A fresh open each time: nothing cached from the last one.
                let mut s = Store::open(Path::new(store)).map_err(|e| e.to_string())?;
                let text = s.get(name).map_err(|e| e.to_string())?;
                wall.push(t.elapsed().as_secs_f64() * 1e3);
                cpu.push(thread_cpu_ms() - c);
                std::hint::black_box(text);
            }
            let stats = |times: &mut Vec<f64>| {
                times.sort_by(f64::total_cmp);
                let mean = times.iter().sum::<f64>() / n as f64;
                let p99 = times[((n * 99).div_ceil(100)).clamp(1, n) - 1];
                format!(
                    "median {:.3} ms, mean {mean:.3} ms, p99 {p99:.3} ms, max {:.3} ms",
                    times[n / 2],
                    times[n - 1]
                )
            };
            super::print(&format!(
                "{n} gets (fresh open each): wall {}; CPU {}\n",
                stats(&mut wall),
                stats(&mut cpu)
            ))
        }
    }
}

/// CPU time of this thread in ms: what a get costs, without the time the
/// thread waited for a CPU on a loaded machine.
fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `t` is.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}
