//! Compiled components, cached on disk.
//!
//! Compiling a component with Cranelift takes a few hundred milliseconds;
//! loading a compiled artifact takes about one.  Artifacts are kept under
//! `$XDG_CACHE_HOME/wloc` (or `~/.cache/wloc`, or `$WLOC_CACHE_DIR`),
//! named by the sha256 digest of the component and a digest of the
//! engine's compatibility hash (wasmtime version, target, settings such
//! as fuel and epochs), so a change of either compiles again.
//!
//! Deserialising an artifact runs code it describes, so it is only done
//! after checks: the directory must belong to the user and be writable by
//! nobody else, and the artifact's sha256 must match the one recorded
//! beside it when it was written.  A failed check recompiles; a directory
//! that cannot be used means no cache, never an error.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::Engine;

pub use wloc_trust::digest::{hex, sha256_hex};

/// Feeds what `Hash` writes into sha256.
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// A digest of the engine's compatibility hash.
pub fn engine_key(engine: &Engine) -> String {
    let mut h = ShaHasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut h);
    hex(&h.0.finalize()[..16])
}

/// How a component was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a cached artifact.
    Hit,
    /// Compiled, and the artifact stored.
    Stored,
    /// Compiled without caching (no usable cache directory, or storing failed).
    Compiled,
    /// A built-in component's code, precompiled when wloc was built.
    Precompiled,
}

/// Where compiled artifacts live, if anywhere.
#[derive(Clone, Debug)]
pub struct CompiledCache {
    dir: Option<PathBuf>,
}

impl CompiledCache {
    /// No caching: every load compiles.
    pub fn disabled() -> Self {
        CompiledCache { dir: None }
    }

    /// A cache in a given directory (created if needed).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        CompiledCache {
            dir: Some(dir.into()),
        }
    }

    /// The user's cache: `$WLOC_CACHE_DIR`, else `$XDG_CACHE_HOME/wloc`,
    /// else `$HOME/.cache/wloc`; disabled when `WLOC_CACHE_DIR` is empty
    /// or no directory is known.
    pub fn from_env() -> Self {
        if let Some(d) = std::env::var_os("WLOC_CACHE_DIR") {
            return if d.is_empty() {
                Self::disabled()
            } else {
                Self::at(d)
            };
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| Path::new(v).is_absolute())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| Path::new(v).is_absolute())
                    .map(|h| PathBuf::from(h).join(".cache"))
            });
        match base {
            Some(b) => Self::at(b.join("wloc")),
            None => Self::disabled(),
        }
    }

    /// The directory, if caching is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The directory, created private if missing, if it is safe to use.
    fn usable_dir(&self) -> Option<&Path> {
        let dir = self.dir.as_deref()?;
        if !dir.is_dir() {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            b.create(dir).ok()?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::symlink_metadata(dir).ok()?;
            if !m.is_dir()
                || m.uid() != rustix::process::geteuid().as_raw()
                || m.mode() & 0o022 != 0
            {
                return None;
            }
        }
        Some(dir)
    }

    /// The compiled component for `wasm` (whose sha256 is `digest`): from
    /// the cache when a verified artifact is there, else compiled (and
    /// stored).
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let Some(dir) = self.usable_dir() else {
            return Ok((Component::new(engine, wasm)?, CacheOutcome::Compiled));
        };
        let key = format!("{digest}-{}", engine_key(engine));
        let art = dir.join(format!("{key}.cwasm"));
        let sum = dir.join(format!("{key}.cwasm.sha256"));
        if let (Ok(bytes), Ok(recorded)) = (std::fs::read(&art), std::fs::read_to_string(&sum)) {
            if recorded.trim() == sha256_hex(&bytes) {
                // SAFETY: the artifact was written by `precompile_component`
                // of an engine with the same compatibility hash, into a
                // directory only this user can write, and its digest
                // matches the one recorded when it was written, so the
                // bytes are what wasmtime produced.
                if let Ok(c) = unsafe { Component::deserialize(engine, &bytes) } {
                    return Ok((c, CacheOutcome::Hit));
                }
            }
        }
        let bytes = engine.precompile_component(wasm)?;
        // SAFETY: these bytes were just produced by this engine.
        let component = unsafe { Component::deserialize(engine, &bytes)? };
        let outcome = match store(&art, &sum, &bytes) {
            Ok(()) => CacheOutcome::Stored,
            Err(_) => CacheOutcome::Compiled,
        };
        Ok((component, outcome))
    }
}

/// Writes an artifact and its digest, each through a temporary file and a
/// rename, so that readers never see half a file.
fn store(art: &Path, sum: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let write = |path: &Path, data: &[u8]| -> std::io::Result<()> {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all().ok();
        drop(f);
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    };
    // The digest goes last: an artifact without a matching digest is
    // never loaded.
    let _ = std::fs::remove_file(sum);
    write(art, bytes)?;
    write(sum, sha256_hex(bytes).as_bytes())
}
