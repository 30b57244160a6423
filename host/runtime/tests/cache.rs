//! The compiled cache: stored once, loaded after, refused when tampered
//! with (its tag no longer matches) or when its folder is not private.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use wloc_runtime::{CacheOutcome, CompiledCache, Runtime, builtin};

fn fresh_dir(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn artifacts(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    v.sort();
    v
}

#[test]
fn stores_then_hits_then_recompiles_what_was_tampered_with() {
    let dir = fresh_dir("cycle");
    let rt = Runtime::with_cache(CompiledCache::at(&dir)).unwrap();
    let wasm = builtin::synthetic_wasm();
    let c = rt.load("synthetic", wasm).unwrap();
    assert_eq!(c.cache_outcome(), CacheOutcome::Stored);
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "cache folder mode {mode:o}");
    let c = rt.load("synthetic", wasm).unwrap();
    assert_eq!(c.cache_outcome(), CacheOutcome::Hit);
    let arts = artifacts(&dir);
    assert_eq!(arts.len(), 1);
    let name = arts[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with(c.digest()), "{name}");

    // One flipped byte: the tag check fails, the artifact is rebuilt.
    let mut bytes = std::fs::read(&arts[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&arts[0], &bytes).unwrap();
    let c = rt.load("synthetic", wasm).unwrap();
    assert_eq!(c.cache_outcome(), CacheOutcome::Stored);
    assert_eq!(
        rt.load("synthetic", wasm).unwrap().cache_outcome(),
        CacheOutcome::Hit
    );

    // A new secret (another runtime, the old one removed): the artifact
    // tagged under the old one is never loaded.
    std::fs::remove_file(dir.join("hmac-key")).unwrap();
    let rt2 = Runtime::with_cache(CompiledCache::at(&dir)).unwrap();
    assert_eq!(
        rt2.load("synthetic", wasm).unwrap().cache_outcome(),
        CacheOutcome::Stored
    );
    let rt = rt2;

    // A folder others may write to is not used at all.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(
        rt.load("synthetic", wasm).unwrap().cache_outcome(),
        CacheOutcome::Compiled
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(
        rt.load("synthetic", wasm).unwrap().cache_outcome(),
        CacheOutcome::Hit
    );

    // Without a cache, every load compiles.
    let rt = Runtime::with_cache(CompiledCache::disabled()).unwrap();
    assert_eq!(
        rt.load("synthetic", wasm).unwrap().cache_outcome(),
        CacheOutcome::Compiled
    );
}
