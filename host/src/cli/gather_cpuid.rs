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
    /// Output directory, created if needed (read it back with `wloc ls -i DIR --if cpuid`).
    dir: std::path::PathBuf,
}

/// Writes `puN` files (N from 0, PUs of the process's affinity mask that
/// are online, in OS index order) and `hwloc-cpuid-info`, as
/// hwloc-gather-cpuid does.
pub fn run(a: &GatherCpuidArgs) -> super::Result {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        use wloc::cpuid_native::{gather_every_pu, CPUID_INFO};
        let dir = &a.dir;
        let shown = dir.display();
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir)
                .map_err(|e| format!("cannot use '{shown}' as output directory: {e}"))?;
            if entries.next().is_some() {
                if !a.force {
                    return Err(format!(
                        "directory '{shown}' exists and is not empty; use -f to overwrite its dump files"
                    )
                    .into());
                }
                // Drop an older dump so that no stale `puN` file remains.
                for e in
                    std::fs::read_dir(dir).map_err(|e| format!("cannot read '{shown}': {e}"))?
                {
                    let e = e.map_err(|e| format!("cannot read '{shown}': {e}"))?;
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if wloc_probe::DumpSource::wants_file(&name) && e.path().is_file() {
                        std::fs::remove_file(e.path()).map_err(|err| {
                            format!("cannot remove '{}': {err}", e.path().display())
                        })?;
                    }
                }
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
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write '{}': {e}", path.display()))
        })?;
        let info = dir.join(wloc_probe::CPUID_INFO_FILE);
        std::fs::write(&info, CPUID_INFO)
            .map_err(|e| format!("cannot write '{}': {e}", info.display()))?;
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
