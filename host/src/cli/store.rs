//! Many topologies in one file: `wloc compress-dir IN OUT`, `wloc
//! uncompress-dir IN OUT` (hwloc-compress-dir's names) and `wloc store
//! pack|list|get|time`. The format and the way it is made are in the
//! `wloc-store` crate.
//!
//! Exit codes: 0 done, 1 any failure (told on standard error), 2 bad
//! command line. As hwloc-compress-dir, `compress-dir` (and `store pack`
//! for the files it finds in directories) skips a file that is not a
//! topology wloc can load, with a warning on standard error naming the
//! file and why, and still exits 0 if it stored the others; a file named
//! on `store pack`'s command line must load (exit 1 otherwise), and so
//! must at least one file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wloc_store::{pack_prepared, Prepared, Store};

use super::topology::load_xml;

/// The store file `compress-dir` writes into an existing output directory.
pub const DIR_STORE: &str = "topologies.wstore";

/// The canonical document of an XML topology: what `wloc ls --of xml`
/// writes of it (every object kept).
pub fn canonical(path: &str) -> Result<String, String> {
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
}

/// The files of the inputs: files as given, directories' regular files
/// (hwloc-compress-dir takes every file of its input directory).
fn input_files(inputs: &[String]) -> Result<Vec<Input>, String> {
    let mut files = Vec::new();
    for i in inputs {
        let p = Path::new(i);
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .map_err(|e| format!("cannot read the directory '{i}': {e}"))?;
            for e in rd {
                let e = e.map_err(|e| format!("cannot read the directory '{i}': {e}"))?;
                let path = e.path();
                if path.is_file() {
                    files.push(Input {
                        name: e.file_name().to_string_lossy().into_owned(),
                        path,
                        in_dir: true,
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
            });
        } else {
            return Err(format!("'{i}' is neither a file nor a directory"));
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
) -> Result<(Vec<u8>, wloc_store::PackStats, usize), String> {
    let n = files.len();
    let t_load = Instant::now();
    let b = bar(n, "loading");
    let workers = std::thread::available_parallelism()
        .map_or(1, |w| w.get())
        .min(n);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut docs: Vec<Option<Result<Prepared, String>>> = (0..n).map(|_| None).collect();
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
                        let doc = canonical(&files[i].path.to_string_lossy());
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
        ));
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

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    std::fs::write(path, data).map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

// ------------------------------------------------------------ compress-dir

/// Options of `wloc compress-dir`, named as hwloc-compress-dir's.
#[derive(Args, Debug)]
pub struct CompressDirArgs {
    /// Uncompress instead (as `wloc uncompress-dir IN OUT`).
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Say what is done.
    #[arg(short, long)]
    verbose: bool,
    /// The directory of XML topologies (one per node).
    input: String,
    /// The store to write: a file, or an existing directory to write topologies.wstore into.
    output: String,
}

/// Runs `wloc compress-dir`.
pub fn compress_dir(a: &CompressDirArgs) -> super::Result {
    if a.reverse {
        return uncompress(&a.input, &a.output, a.verbose);
    }
    if !Path::new(&a.input).is_dir() {
        return Err(format!("'{}' is not a directory", a.input).into());
    }
    let out = Path::new(&a.output);
    let target = if out.is_dir() {
        out.join(DIR_STORE)
    } else {
        out.to_path_buf()
    };
    let files = input_files(std::slice::from_ref(&a.input))?;
    let in_bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
        .sum();
    let t = Instant::now();
    let (data, stats, skipped) = pack_files(files, a.verbose)?;
    write(&target, &data)?;
    if a.verbose {
        eprintln!(
            "references {} bytes, node diffs {} bytes, dictionary {} bytes, index and header {} bytes",
            stats.reference_bytes,
            stats.diff_bytes,
            stats.dictionary_bytes,
            stats.bytes - stats.reference_bytes - stats.diff_bytes - stats.dictionary_bytes
        );
    }
    eprintln!(
        "Compressed {} topologies ({} bytes) into {} ({} bytes, {:.1}x smaller): {} references, {} identical to theirs, {} blocks, in {:.2} s",
        stats.nodes,
        in_bytes,
        target.display(),
        stats.bytes,
        in_bytes as f64 / stats.bytes as f64,
        stats.references,
        stats.identical,
        stats.blocks,
        t.elapsed().as_secs_f64()
    );
    if skipped > 0 {
        eprintln!("Skipped {skipped} files that are not topologies (named above)");
    }
    Ok(())
}

// ------------------------------------------------------------ uncompress-dir

/// Options of `wloc uncompress-dir`.
#[derive(Args, Debug)]
pub struct UncompressDirArgs {
    /// Say what is done.
    #[arg(short, long)]
    verbose: bool,
    /// A store (or a directory holding topologies.wstore), or a directory hwloc-compress-dir made.
    input: String,
    /// The directory to write one XML file per topology into (made if missing).
    output: String,
}

/// Runs `wloc uncompress-dir`.
pub fn uncompress_dir(a: &UncompressDirArgs) -> super::Result {
    uncompress(&a.input, &a.output, a.verbose)
}

fn uncompress(input: &str, output: &str, verbose: bool) -> super::Result {
    let inp = Path::new(input);
    let out = Path::new(output);
    std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot make the directory '{output}': {e}"))?;
    let store = if inp.is_dir() {
        inp.join(DIR_STORE)
    } else {
        inp.to_path_buf()
    };
    if inp.is_dir() && !store.exists() {
        return uncompress_hwloc(inp, out, verbose);
    }
    let mut s = Store::open(&store).map_err(|e| e.to_string())?;
    let entries = s.entries().map_err(|e| e.to_string())?;
    let b = bar(entries.len(), "uncompressing");
    for e in &entries {
        let name = &e.name;
        let text = s.get_entry(e).map_err(|e| e.to_string())?;
        let target = safe_join(out, name)?;
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

/// `out/name`, refusing names that would leave `out` (a corrupt or
/// hostile store).
fn safe_join(out: &Path, name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(format!(
            "the store holds a topology named '{name}', which is not a file name"
        ));
    }
    Ok(out.join(name))
}

/// What hwloc-compress-dir -R does: full XML files are kept, `X.diff.xml`
/// files are applied to the topology their refname names.
fn uncompress_hwloc(inp: &Path, out: &Path, verbose: bool) -> super::Result {
    use wloc::xml::diff;
    let mut files: Vec<(String, PathBuf)> = input_files(&[inp.to_string_lossy().into_owned()])?
        .into_iter()
        .map(|f| (f.name, f.path))
        .collect();
    files.sort();
    let (diffs, full): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|(n, _)| n.ends_with(".diff.xml"));
    let mut done = std::collections::HashMap::new();
    for (name, path) in &full {
        let text = canonical(&path.to_string_lossy())?;
        write(&safe_join(out, name)?, text.as_bytes())?;
        done.insert(name.clone(), path.clone());
    }
    for (name, path) in &diffs {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
        let d = diff::parse(&text).map_err(|e| {
            format!(
                "'{}' is not a valid hwloc topology diff: {e}",
                path.display()
            )
        })?;
        let r = d.refname.clone().unwrap_or_default();
        let reference = done.get(&r).ok_or_else(|| {
            format!(
                "'{}' refers to '{r}', which is not a full topology of '{}'",
                path.display(),
                inp.display()
            )
        })?;
        let mut topo = load_xml(&reference.to_string_lossy())?;
        diff::apply(&mut topo, &d.changes, false)
            .map_err(|e| format!("cannot apply '{}' to '{r}': {e}", path.display()))?;
        let target = name.trim_end_matches(".diff.xml").to_string() + ".xml";
        write(
            &safe_join(out, &target)?,
            wloc::xml::export_canonical(&topo).as_bytes(),
        )?;
        if verbose {
            eprintln!("{target} from {r}");
        }
    }
    eprintln!(
        "Uncompressed {} topologies ({} from diffs) into {}",
        full.len() + diffs.len(),
        diffs.len(),
        out.display()
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
    /// Write one topology of a store (its canonical XML) to standard output or a file.
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
