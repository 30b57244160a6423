//! Compiled components, cached on disk.
//!
//! Compiling a component with Cranelift takes a few hundred milliseconds;
//! loading a compiled artifact takes about one.  Artifacts are kept under
//! `$XDG_CACHE_HOME/wloc` (or `~/.cache/wloc`, or `$WLOC_CACHE_DIR`),
//! named by the component's digest
//! ([`wloc_trust::signing::component_digest`]), the architecture the code
//! was compiled for and a digest of the engine's compatibility hash
//! (wasmtime version, target, CPU features, settings such as fuel and
//! epochs), so a change of any compiles again.  What is signed and
//! checked is the `.wasm`, the same bytes on every host; what is cached
//! is code for one host, and a cache folder shared by hosts of several
//! architectures (a home folder on a network filesystem) holds one
//! artifact per architecture, never one host's code for another.
//!
//! Deserialising an artifact runs code it describes, so it is only done
//! after checks:
//!
//! * the folder is opened once, from `/` down, and it and every folder
//!   above it are checked on their descriptors (see [`dir`]); every later
//!   read and write goes through the folder's descriptor, so swapping the
//!   folder or a parent after the checks changes nothing;
//! * each artifact ends with an HMAC-SHA256 tag, keyed by a secret
//!   (32 random bytes, mode 0600) kept in the folder, over the artifact's
//!   name and bytes: an artifact that this user's wloc did not write is
//!   refused even if a check of the folder were missed;
//! * the artifact is read into memory once, and the bytes whose tag was
//!   checked are the ones wasmtime deserialises.
//!
//! A failed tag recompiles.  A folder that cannot be used safely means no
//! cache, with one warning on standard error, never an error.

mod dir;

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once, OnceLock};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use dir::CacheDir;

pub use wloc_trust::digest::hex;
pub use wloc_trust::signing::component_digest;

/// Name of the secret that keys the artifacts' tags, in the cache folder.
const SECRET_FILE: &str = "hmac-key";
/// Bytes of the secret and of a tag.
const TAG_BYTES: usize = 32;
/// What a tag is over, before the artifact's name and bytes: a change of
/// format never accepts an older artifact.
const TAG_CONTEXT: &[u8] = b"wloc:compiled:v1\0";

/// Why the cache folder may not be used (then there is no cache, and one
/// warning says why).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    /// The path, or a folder above it, is something else than a folder.
    #[error("{} is not a folder", .0.display())]
    NotFolder(PathBuf),
    /// A folder above the cache belongs to another user than this one
    /// or root, who may rename the cache folder.
    #[error("{} belongs to user {uid}, not to this user or root", path.display())]
    AncestorOwner {
        /// The folder.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// The cache folder belongs to another user.
    #[error("{} belongs to user {uid}, not to this user", path.display())]
    CacheOwner {
        /// The folder.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// Others may rename entries of a folder above the cache.
    #[error("{} is writable by others (mode {mode:o}) and not sticky", path.display())]
    SharedAncestor {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: rustix::fs::RawMode,
    },
    /// Others may write in the cache folder.
    #[error("{} is writable by others (mode {mode:o})", path.display())]
    SharedCache {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: rustix::fs::RawMode,
    },
    /// The path ends with `/`, `.` or `..`, which name another folder
    /// than the one the user seems to give.
    #[error("{} does not end with a folder name (a trailing '/', '.' or '..')", .0.display())]
    NoFolderName(PathBuf),
    /// The path holds `..`.
    #[error("{} holds '..'", .0.display())]
    ParentDir(PathBuf),
    /// A relative path, and no current folder to find it from.
    #[error("no current folder to find {}: {source}", path.display())]
    NoCurrentDir {
        /// The path.
        path: PathBuf,
        /// Why there is no current folder.
        source: std::io::Error,
    },
    /// The existing part of the path cannot be resolved.
    #[error("cannot resolve {}: {source}", path.display())]
    Resolve {
        /// The part of the path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A system call on a folder of the path failed.
    #[error("cannot {op} {}: {errno}", path.display())]
    Sys {
        /// What was done: `open`, `stat` or `create`.
        op: &'static str,
        /// The folder.
        path: PathBuf,
        /// The error number.
        errno: rustix::io::Errno,
    },
    /// A folder of the path is a symbolic link (or not a folder).
    #[error("{} is a symbolic link or not a folder", .0.display())]
    LinkOrNotFolder(PathBuf),
    /// The secret of the tags cannot be read.
    #[error("its {SECRET_FILE}: {0}")]
    SecretUnreadable(std::io::Error),
    /// The secret of the tags has the wrong size.
    #[error("its {SECRET_FILE} is not {TAG_BYTES} bytes")]
    SecretSize,
    /// No random numbers to make a secret.
    #[error("no random numbers for a secret: {0}")]
    NoRandom(getrandom::Error),
    /// A new secret cannot be written.
    #[error("cannot write its {SECRET_FILE}: {0}")]
    SecretUnwritable(std::io::Error),
    /// The secret disappeared between its writing and its reading.
    #[error("its {SECRET_FILE} vanished")]
    SecretVanished,
    /// An error about the secret of the folder `path`.
    #[error("{}: {source}", path.display())]
    InFolder {
        /// The cache folder.
        path: PathBuf,
        /// What went wrong in it.
        source: Box<CacheError>,
    },
}

impl CacheError {
    /// The system call `op` on `path` failed with `errno`.
    pub(crate) fn sys(op: &'static str, path: &Path, errno: rustix::io::Errno) -> CacheError {
        CacheError::Sys {
            op,
            path: path.to_path_buf(),
            errno,
        }
    }
}

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

/// The file name of the artifact of the component whose digest is
/// `digest`, compiled by `engine` for this host: the architecture is in
/// the name as well as in the compatibility hash, so that the artifacts
/// of a folder shared by several hosts say which is which.
pub fn artifact_name(digest: &str, engine: &Engine) -> String {
    format!(
        "{digest}-{}-{}.cwasm",
        std::env::consts::ARCH,
        engine_key(engine)
    )
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

/// The opened cache folder and the secret of its tags.
struct Opened {
    dir: CacheDir,
    secret: [u8; TAG_BYTES],
}

/// Where compiled artifacts live, if anywhere.
#[derive(Clone)]
pub struct CompiledCache {
    dir: Option<PathBuf>,
    /// The folder, opened and checked on first use (`None` inside: not
    /// usable).
    opened: Arc<OnceLock<Option<Opened>>>,
}

impl std::fmt::Debug for CompiledCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("CompiledCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Says once per process that the cache is not used, and why.
fn warn_unusable(path: &Path, why: &CacheError) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let shown = wloc_trust::text::sanitize(&path.to_string_lossy(), 200);
        let why = wloc_trust::text::sanitize(&why.to_string(), 300);
        eprintln!(
            "wloc: warning: the compiled-code cache {shown} is not used ({why}); \
             components are compiled on each run"
        );
    });
}

/// The tag of the artifact `name` holding `code`.
fn tag(secret: &[u8; TAG_BYTES], name: &str, code: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(TAG_CONTEXT);
    mac.update(name.as_bytes());
    mac.update(b"\0");
    mac.update(code);
    mac
}

/// The secret of the folder's tags: read, or made (32 random bytes, mode
/// 0600, published with a link so that racing processes agree on one).
fn secret(dir: &CacheDir) -> Result<[u8; TAG_BYTES], CacheError> {
    let read = |dir: &CacheDir| -> Result<Option<[u8; TAG_BYTES]>, CacheError> {
        let Some(bytes) = dir
            .read_private(SECRET_FILE)
            .map_err(CacheError::SecretUnreadable)?
        else {
            return Ok(None);
        };
        <[u8; TAG_BYTES]>::try_from(&bytes[..])
            .map(Some)
            .map_err(|_| CacheError::SecretSize)
    };
    if let Some(s) = read(dir)? {
        return Ok(s);
    }
    let mut fresh = [0u8; TAG_BYTES];
    getrandom::fill(&mut fresh).map_err(CacheError::NoRandom)?;
    let tmp = dir::temporary_name(SECRET_FILE);
    dir.create_new(&tmp, &fresh)
        .map_err(CacheError::SecretUnwritable)?;
    // Another process may have published its secret first: then that one
    // is used, as by every later process.
    let linked = dir.link_new(&tmp, SECRET_FILE);
    let _ = dir.remove(&tmp);
    if let Err(e) = linked
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        return Err(CacheError::SecretUnwritable(e));
    }
    read(dir)?.ok_or(CacheError::SecretVanished)
}

impl CompiledCache {
    /// No caching: every load compiles.
    pub fn disabled() -> Self {
        CompiledCache {
            dir: None,
            opened: Arc::new(OnceLock::new()),
        }
    }

    /// A cache in a given directory (created if needed, opened and checked
    /// on first use).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        CompiledCache {
            dir: Some(dir.into()),
            opened: Arc::new(OnceLock::new()),
        }
    }

    /// The user's cache: `$WLOC_CACHE_DIR`, else `$XDG_CACHE_HOME/wloc`,
    /// else `$HOME/.cache/wloc`; disabled when `WLOC_CACHE_DIR` is empty
    /// or no directory is known.
    pub fn from_env() -> Self {
        if let Some(d) = wloc_trust::env::var_os("WLOC_CACHE_DIR") {
            return if d.is_empty() {
                Self::disabled()
            } else {
                Self::at(d)
            };
        }
        let base = wloc_trust::env::var_os("XDG_CACHE_HOME")
            .filter(|v| Path::new(v).is_absolute())
            .map(PathBuf::from)
            .or_else(|| {
                wloc_trust::env::var_os("HOME")
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

    /// The opened folder, if caching is on and the folder is safe to use
    /// (a warning, once, when it is not).
    fn usable(&self) -> Option<&Opened> {
        let path = self.dir.as_deref()?;
        let opened = self
            .opened
            .get_or_init(|| {
                let open = CacheDir::open(path).and_then(|dir| {
                    let secret = secret(&dir).map_err(|e| CacheError::InFolder {
                        path: dir.path().to_path_buf(),
                        source: Box::new(e),
                    })?;
                    Ok(Opened { dir, secret })
                });
                open.map_err(|why| warn_unusable(path, &why)).ok()
            })
            .as_ref()?;
        // Its mode or owner may have changed since.
        if let Err(why) = opened.dir.still_private() {
            warn_unusable(path, &why);
            return None;
        }
        Some(opened)
    }

    /// The compiled component for `wasm` (whose digest is `digest`): from
    /// the cache when an artifact with a valid tag is there, else compiled
    /// (and stored).
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let Some(opened) = self.usable() else {
            return Ok((Component::new(engine, wasm)?, CacheOutcome::Compiled));
        };
        let name = artifact_name(digest, engine);
        if let Some(code) = opened.verified(&name) {
            // SAFETY: `code` is the bytes, held in memory, whose tag was
            // checked: only a holder of this user's secret (this user's
            // wloc, which writes only what `precompile_component` of an
            // engine with the same compatibility hash produced) can tag
            // them, and the name in the tag is this component's and this
            // engine's.
            if let Ok(c) = unsafe { Component::deserialize(engine, code.as_slice()) } {
                return Ok((c, CacheOutcome::Hit));
            }
        }
        let bytes = engine.precompile_component(wasm)?;
        // SAFETY: these bytes were just produced by this engine.
        let component = unsafe { Component::deserialize(engine, &bytes)? };
        let outcome = match opened.store(&name, bytes) {
            Ok(()) => CacheOutcome::Stored,
            Err(_) => CacheOutcome::Compiled,
        };
        Ok((component, outcome))
    }
}

impl Opened {
    /// The code of the artifact `name`, if it is there and its tag is
    /// valid.
    fn verified(&self, name: &str) -> Option<Vec<u8>> {
        let mut bytes = self.dir.read(name).ok()??;
        let at = bytes.len().checked_sub(TAG_BYTES)?;
        let ok = tag(&self.secret, name, &bytes[..at])
            .verify_slice(&bytes[at..])
            .is_ok();
        ok.then(|| {
            bytes.truncate(at);
            bytes
        })
    }

    /// Stores the artifact `name`: its code, then its tag, in one file
    /// that replaces any earlier one at once.
    fn store(&self, name: &str, mut code: Vec<u8>) -> std::io::Result<()> {
        let t = tag(&self.secret, name, &code).finalize().into_bytes();
        code.extend_from_slice(&t);
        // The digest file of the earlier format, if any, is of no use.
        let _ = self.dir.remove(&format!("{name}.sha256"));
        self.dir.replace(name, &code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        Engine::new(&crate::engine_config::engine_config()).unwrap()
    }

    fn fresh(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wloc-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn stores_hits_and_refuses_what_it_did_not_tag() {
        let d = fresh("tags");
        let e = engine();
        let wasm = crate::builtin::synthetic_wasm();
        let digest = component_digest(wasm);
        let cache = CompiledCache::at(&d);
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Stored
        );
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Hit
        );
        let secret = std::fs::metadata(d.join(SECRET_FILE)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(secret.permissions().mode() & 0o777, 0o600);
        let name = artifact_name(&digest, &e);
        assert!(name.contains(std::env::consts::ARCH), "{name}");
        let stored = std::fs::read(d.join(&name)).unwrap();

        // Other code, with the sha256 file the earlier format trusted:
        // refused, compiled again and stored over it.
        let code = &stored[..stored.len() - TAG_BYTES];
        let mut forged = code.to_vec();
        let mid = forged.len() / 2;
        forged[mid] ^= 1;
        std::fs::write(
            d.join(format!("{name}.sha256")),
            wloc_trust::digest::sha256_hex(&forged),
        )
        .unwrap();
        std::fs::write(d.join(&name), &forged).unwrap();
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Stored
        );
        assert!(!d.join(format!("{name}.sha256")).exists());

        // A tag made with another key.
        let mut other = code.to_vec();
        other.extend_from_slice(&tag(&[7; TAG_BYTES], &name, code).finalize().into_bytes());
        std::fs::write(d.join(&name), &other).unwrap();
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Stored
        );

        // A valid artifact under another component's name.
        let other_name = artifact_name(&"0".repeat(64), &e);
        let opened = cache.usable().unwrap();
        assert!(opened.verified(&name).is_some());
        std::fs::copy(d.join(&name), d.join(&other_name)).unwrap();
        assert!(opened.verified(&other_name).is_none());

        // A cut file.
        std::fs::write(d.join(&name), &stored[..10]).unwrap();
        assert!(opened.verified(&name).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_unusable_folder_means_no_cache_not_an_error() {
        let d = fresh("unusable");
        let e = engine();
        let wasm = crate::builtin::synthetic_wasm();
        let digest = component_digest(wasm);
        // A trailing '/'.
        let cache = CompiledCache::at(format!("{}/", d.display()));
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Compiled
        );
        assert!(!d.exists());
        // A secret that is not private.
        std::fs::create_dir(&d).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(d.join(SECRET_FILE), [1u8; TAG_BYTES]).unwrap();
        std::fs::set_permissions(d.join(SECRET_FILE), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let cache = CompiledCache::at(&d);
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Compiled
        );
        // A secret of the wrong size.
        std::fs::set_permissions(d.join(SECRET_FILE), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        std::fs::write(d.join(SECRET_FILE), [1u8; 5]).unwrap();
        let cache = CompiledCache::at(&d);
        assert_eq!(
            cache.load_or_compile(&e, wasm, &digest).unwrap().1,
            CacheOutcome::Compiled
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
