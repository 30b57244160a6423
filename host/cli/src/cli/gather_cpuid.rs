//! `wloc gather-cpuid DIR`: record this machine's CPUID, one `puN` file
//! per PU, as hwloc-gather-cpuid does (x86_64 Linux).

use clap::Args;

/// Options of `wloc gather-cpuid`.
#[derive(Args, Debug)]
pub struct GatherCpuidArgs {
    /// Write into a directory that is not empty, replacing its dump files.
    #[arg(short = 'f', long)]
    force: bool,
    /// Do not print progress messages.
    #[arg(short = 's', long)]
    silent: bool,
    /// Only gather the PU of this OS index, into the file `puIDX` (as
    /// hwloc-gather-cpuid names it; no summary file): a dump to look at,
    /// not a whole machine to read back.  With `-` as DIR, to standard
    /// output.
    #[arg(short = 'c', value_name = "IDX")]
    only: Option<u32>,
    /// Output directory, created if needed (read it back with `wloc ls -i DIR --if cpuid`).
    dir: std::path::PathBuf,
}

/// hwloc-gather-cpuid's closing words (CPUID identifies the machine).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn say_warning(progress: &super::Progress) {
    progress.say("");
    progress.say("WARNING: Do not post these files on a public list or website unless you");
    progress.say("WARNING: are sure that no information about this platform is sensitive.");
}

/// `-c IDX`: one PU's dump, in `DIR/puIDX` or on standard output.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn gather_only(a: &GatherCpuidArgs, os: u32) -> super::Result {
    let progress = super::Progress::new(a.silent);
    let stdout = a.dir.as_os_str() == "-";
    let path = a.dir.join(format!("pu{os}"));
    if stdout {
        progress.say("Gathering on stdout ...");
    } else {
        if path.exists() && !a.force {
            return Err(format!("'{}' exists; use -f to overwrite it", path.display()).into());
        }
        std::fs::create_dir_all(&a.dir)
            .map_err(|e| format!("cannot create directory '{}': {e}", a.dir.display()))?;
        progress.say(&format!("Gathering in directory {} ...", a.dir.display()));
    }
    let text = wloc_discovery::cpuid_native::gather_one_pu(os)?
        .ok_or_else(|| format!("Cannot find PU P#{os}"))?;
    if stdout {
        progress.say(&format!("Gathering CPUID of PU P#{os} on stdout ..."));
        progress.finish()?;
        super::print(&text)?;
    } else {
        progress.say(&format!(
            "Gathering CPUID of PU P#{os} in path {} ...",
            path.display()
        ));
        wloc::files::write(&path, text.as_bytes())?;
    }
    let progress = super::Progress::new(a.silent);
    say_warning(&progress);
    progress.finish()
}

/// Writes `puN` files (N from 0, PUs of the process's affinity mask that
/// are online, in OS index order) and `hwloc-cpuid-info`, as
/// hwloc-gather-cpuid does.
/// Removes the `puN` files of an older dump that this one, of `pus` PUs,
/// did not write (so that no stale PU is read back with the new ones).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn remove_stale_dump_files(dir: &std::path::Path, pus: usize) -> super::Result {
    let shown = dir.display();
    for e in std::fs::read_dir(dir).map_err(|e| format!("cannot read '{shown}': {e}"))? {
        let e = e.map_err(|e| format!("cannot read '{shown}': {e}"))?;
        let name = e.file_name();
        let name = name.to_string_lossy();
        let written = name
            .strip_prefix("pu")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n < pus && name == format!("pu{n}"));
        let info = name == wloc_probe::CPUID_INFO_FILE;
        if !written && !info && wloc_probe::DumpSource::wants_file(&name) && e.path().is_file() {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("cannot remove '{}': {err}", e.path().display()))?;
        }
    }
    Ok(())
}

pub fn run(a: &GatherCpuidArgs) -> super::Result {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        use wloc_discovery::cpuid_native::{CPUID_INFO, gather_every_pu};
        if let Some(os) = a.only {
            return gather_only(a, os);
        }
        if a.dir.as_os_str() == "-" {
            return Err("Cannot gather multiple PUs on stdout (use -c IDX)".into());
        }
        let dir = &a.dir;
        let shown = dir.display();
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir)
                .map_err(|e| format!("cannot use '{shown}' as output directory: {e}"))?;
            // With -f, an older dump's files are replaced one by one
            // below, and those the new dump has no use for are removed
            // only once it is complete: a kill or a full disk meanwhile
            // leaves every old file whole.
            if entries.next().is_some() && !a.force {
                return Err(format!(
                    "directory '{shown}' exists and is not empty; use -f to overwrite its dump files"
                )
                .into());
            }
        } else {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create directory '{shown}': {e}"))?;
        }
        let progress = super::Progress::new(a.silent);
        let pus = gather_every_pu(|pu, os, text| {
            if pu == 0 {
                progress.say(&format!("Gathering in directory {shown} ..."));
            }
            let path = dir.join(format!("pu{pu}"));
            progress.say(&format!(
                "Gathering CPUID of PU P#{os} in path {} ...",
                path.display()
            ));
            wloc::files::write(&path, text.as_bytes()).map_err(super::Error::from)
        })?;
        let info = dir.join(wloc_probe::CPUID_INFO_FILE);
        wloc::files::write(&info, CPUID_INFO.as_bytes())?;
        remove_stale_dump_files(dir, pus.len())?;
        if pus.iter().enumerate().any(|(i, &os)| i as u32 != os) && !a.silent {
            eprintln!(
                "wloc: PUs are numbered from 0 in the dump; their OS indexes are {}",
                pus.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        progress.say(&format!("Summary written to {}", info.display()));
        say_warning(&progress);
        progress.finish()
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        Err(format!(
            "cannot gather CPUID into '{}': only x86_64 Linux is supported",
            a.dir.display()
        )
        .into())
    }
}
