//! wloc's built-in Linux discovery component.
//!
//! It runs `wloc-linux` (the same code the host could run natively) over
//! the host's `files` interface: the host grants `/sys` and `/proc`
//! read-only, rebased under an fsroot when one is given, and answers many
//! reads in one call.  Settings arrive through `config`: hwloc's variable
//! names without their `HWLOC_` prefix (`PCI_LOCALITY`, `CPUKINDS`, ...),
//! plus `this-system`, `machine` and the I/O type filters
//! (`filter.pci`, `filter.bridge`, `filter.osdev`), which change what the
//! discovery reads.  Every other type is kept; the host applies the
//! user's filters and administrative restrictions when it rebuilds the
//! tree, so it also keeps disallowed objects here.

use wloc_core::{Topology, TypeFilter};
use wloc_guest::files::{self, FileError};
use wloc_guest::{Discovery, HostCpuid, config};
use wloc_linux::{FsAccess, MAX_FILE_SIZE, Options, setting};

/// Most paths asked in one host call (the host caps requests too).
const BATCH: usize = 4096;

/// `FsAccess` over the host's batched file interface.
struct HostFs;

impl HostFs {
    fn read_batch(paths: &[&str], max: usize) -> Vec<Option<Vec<u8>>> {
        let max = u32::try_from(max).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(paths.len());
        for chunk in paths.chunks(BATCH) {
            let owned: Vec<String> = chunk.iter().map(|p| (*p).to_string()).collect();
            let answers = files::read_many(&owned, max);
            // A host answering fewer entries than asked leaves the rest missing.
            let n = answers.len();
            out.extend(answers.into_iter().map(Result::ok));
            out.extend((n..chunk.len()).map(|_| None));
        }
        out
    }
}

impl FsAccess for HostFs {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        Self::read_batch(&[path], MAX_FILE_SIZE).pop().flatten()
    }

    fn read_many(&self, paths: &[&str]) -> Vec<Option<Vec<u8>>> {
        Self::read_batch(paths, MAX_FILE_SIZE)
    }

    fn read_prefix(&self, path: &str, max: usize) -> Option<Vec<u8>> {
        Self::read_batch(&[path], max.min(MAX_FILE_SIZE))
            .pop()
            .flatten()
    }

    fn read_many_prefix(&self, paths: &[&str], max: usize) -> Vec<Option<Vec<u8>>> {
        Self::read_batch(paths, max.min(MAX_FILE_SIZE))
    }

    fn list(&self, dir: &str) -> Option<Vec<String>> {
        files::list_dir(dir).ok()
    }

    fn read_link(&self, path: &str) -> Option<String> {
        files::read_link(path).ok()
    }

    fn exists(&self, path: &str) -> bool {
        // A pattern without wildcards globs to itself when it exists
        // (following links): one call instead of up to three.
        match files::glob(path) {
            Ok(found) if !found.is_empty() => true,
            Ok(_) | Err(FileError::NotFound) => files::read_link(path).is_ok(),
            Err(_) => false,
        }
    }
}

fn filter_setting(name: &str) -> Result<Option<TypeFilter>, String> {
    let Some(value) = config::get(name) else {
        return Ok(None);
    };
    TypeFilter::from_name(&value).map(Some).ok_or_else(|| {
        format!(
            "setting `{name}`: unknown filter '{value}' (expected all, none, structure or important)"
        )
    })
}

struct Linux;

impl wloc_guest::Guest for Linux {
    fn discover() -> Result<Discovery, String> {
        let mut opts = Options::from_lookup(config::get);
        opts.this_system = config::get(setting::THIS_SYSTEM).is_some_and(|v| v == "1");
        opts.machine = config::get(setting::MACHINE);

        let mut topo = Topology::new();
        topo.set_all_types_filter(TypeFilter::KeepAll);
        topo.include_disallowed = true;
        for (setting, ty) in setting::FILTERS {
            if let Some(f) = filter_setting(setting)? {
                topo.set_type_filter(ty, f)
                    .map_err(|e| format!("setting `{setting}`: {e}"))?;
            }
        }
        let mut topo = wloc_linux::discover(&HostFs, &opts, topo).map_err(|e| e.to_string())?;
        // sysfs does not say which caches are inclusive; CPUID does.  The
        // host answers CPUID for this machine, or from the dump a
        // recording holds, and for nothing else (then there is no PU to
        // query and nothing is marked).
        wloc_probe::annotate_discovered(&HostCpuid::new(), &mut topo);
        wloc_guest::discovery_from_topology(&topo)
    }
}

wloc_guest::export!(Linux with_types_in wloc_guest::bindings);
