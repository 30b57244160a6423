//! CPUID dumps of this machine, gathered by pinning the calling thread on
//! each PU in turn.

use super::{gather_pu, DumpProvider, LinuxPuRunner, CPUID_INFO};

/// Runs `each` with the `puN` dump text of every PU this process may
/// use (its position from 0, its OS index, the text), pinning the calling
/// thread on each in turn and giving it its affinity back at the end, as
/// `hwloc-gather-cpuid` does.  Returns the OS indexes of the PUs.
pub fn gather_every_pu(
    mut each: impl FnMut(usize, u32, String) -> Result<(), String>,
) -> Result<Vec<u32>, String> {
    let runner =
        LinuxPuRunner::new().map_err(|e| format!("cannot read this thread's CPU affinity: {e}"))?;
    let pus = runner.pus().to_vec();
    if pus.is_empty() {
        return Err("no online PU in this process's CPU affinity".into());
    }
    let src = wloc_probe::NativeSource::with_runner(runner);
    for (pu, &os) in pus.iter().enumerate() {
        if !src.runner().pin(pu) {
            return Err(format!("cannot bind to PU P#{os}"));
        }
        each(pu, os, gather_pu(&src, pu))?;
    }
    src.runner()
        .restore()
        .map_err(|e| format!("cannot restore this thread's CPU affinity: {e}"))?;
    Ok(pus)
}

/// The CPUID dump of the PU whose OS index is `os` (the text of its
/// `puN` file), gathered on that PU; `None` when it is not an online PU
/// of this process's affinity mask.
pub fn gather_one_pu(os: u32) -> Result<Option<String>, String> {
    let runner =
        LinuxPuRunner::new().map_err(|e| format!("cannot read this thread's CPU affinity: {e}"))?;
    let Some(pu) = runner.pus().iter().position(|&p| p == os) else {
        return Ok(None);
    };
    let src = wloc_probe::NativeSource::with_runner(runner);
    if !src.runner().pin(pu) {
        return Err(format!("cannot bind to PU P#{os}"));
    }
    let text = gather_pu(&src, pu);
    src.runner()
        .restore()
        .map_err(|e| format!("cannot restore this thread's CPU affinity: {e}"))?;
    Ok(Some(text))
}

/// Gathers the CPUID leaves of every PU this process may use (see
/// [`gather_every_pu`]) into memory.
pub fn gather_this_machine() -> Result<DumpProvider, String> {
    let mut files = Vec::new();
    let pus = gather_every_pu(|pu, _, text| {
        files.push((format!("pu{pu}"), text.into_bytes()));
        Ok(())
    })?;
    files.push((
        wloc_probe::CPUID_INFO_FILE.to_string(),
        CPUID_INFO.as_bytes().to_vec(),
    ));
    let dump = wloc_probe::DumpSource::from_files(files).map_err(|e| e.to_string())?;
    Ok(DumpProvider::new(dump, Some(pus)))
}
