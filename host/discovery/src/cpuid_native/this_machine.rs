//! CPUID dumps of this machine, gathered by pinning the calling thread on
//! each PU in turn.

use super::{CPUID_INFO, DumpProvider, LinuxPuRunner, gather_pu};

/// Why this machine's CPUID could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    /// The calling thread's CPU affinity could not be read.
    #[error("cannot read this thread's CPU affinity: {0}")]
    Affinity(#[source] std::io::Error),
    /// The process may run on no online PU.
    #[error("no online PU in this process's CPU affinity")]
    NoPu,
    /// The thread could not be pinned on a PU (its OS index).
    #[error("cannot bind to PU P#{0}")]
    Bind(u32),
    /// The thread's affinity could not be given back.
    #[error("cannot restore this thread's CPU affinity: {0}")]
    Restore(#[source] std::io::Error),
    /// The gathered files do not make a dump.
    #[error(transparent)]
    Dump(#[from] wloc_probe::DumpError),
}

/// Runs `each` with the `puN` dump text of every PU this process may
/// use (its position from 0, its OS index, the text), pinning the calling
/// thread on each in turn and giving it its affinity back at the end, as
/// `hwloc-gather-cpuid` does.  Returns the OS indexes of the PUs.
/// The error of `each`, when it fails, ends the gathering (the thread's
/// affinity is then left as it was for that PU, as before).
pub fn gather_every_pu<E: From<GatherError>>(
    mut each: impl FnMut(usize, u32, String) -> Result<(), E>,
) -> Result<Vec<u32>, E> {
    let runner = LinuxPuRunner::new().map_err(GatherError::Affinity)?;
    let pus = runner.pus().to_vec();
    if pus.is_empty() {
        return Err(GatherError::NoPu.into());
    }
    let src = wloc_probe::NativeSource::with_runner(runner);
    for (pu, &os) in pus.iter().enumerate() {
        if !src.runner().pin(pu) {
            return Err(GatherError::Bind(os).into());
        }
        each(pu, os, gather_pu(&src, pu))?;
    }
    src.runner().restore().map_err(GatherError::Restore)?;
    Ok(pus)
}

/// The CPUID dump of the PU whose OS index is `os` (the text of its
/// `puN` file), gathered on that PU; `None` when it is not an online PU
/// of this process's affinity mask.
pub fn gather_one_pu(os: u32) -> Result<Option<String>, GatherError> {
    let runner = LinuxPuRunner::new().map_err(GatherError::Affinity)?;
    let Some(pu) = runner.pus().iter().position(|&p| p == os) else {
        return Ok(None);
    };
    let src = wloc_probe::NativeSource::with_runner(runner);
    if !src.runner().pin(pu) {
        return Err(GatherError::Bind(os));
    }
    let text = gather_pu(&src, pu);
    src.runner().restore().map_err(GatherError::Restore)?;
    Ok(Some(text))
}

/// Gathers the CPUID leaves of every PU this process may use (see
/// [`gather_every_pu`]) into memory.
pub fn gather_this_machine() -> Result<DumpProvider, GatherError> {
    let mut files = Vec::new();
    let pus = gather_every_pu::<GatherError>(|pu, _, text| {
        files.push((format!("pu{pu}"), text.into_bytes()));
        Ok(())
    })?;
    files.push((
        wloc_probe::CPUID_INFO_FILE.to_string(),
        CPUID_INFO.as_bytes().to_vec(),
    ));
    let dump = wloc_probe::DumpSource::from_files(files)?;
    Ok(DumpProvider::new(dump, Some(pus)))
}
