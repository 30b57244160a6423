//! Computes the build id the C library and its discovery module compare
//! (`wloc_input::discover::BUILD_ID`): a hash of the sources of what
//! crosses between them (this crate's request and reply, the topology
//! image format and the model it carries), so that a module built from
//! other sources of those is refused rather than misread.
use std::path::{Path, PathBuf};

/// The folders whose files make the build id, from this crate's folder.
const SOURCES: [&str; 5] = [
    "src",
    "../image/src",
    "../image/Cargo.toml",
    "../../no_std-core/src",
    "../../no_std-core/Cargo.toml",
];

fn files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

/// FNV-1a, 64 bits: enough to tell builds apart, and no dependency.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for s in SOURCES {
        let root = dir.join(s);
        println!("cargo:rerun-if-changed={}", root.display());
        let mut all = Vec::new();
        files(&root, &mut all);
        for f in all {
            let rel = f.strip_prefix(&dir).unwrap_or(&f);
            fnv(&mut h, rel.to_string_lossy().as_bytes());
            fnv(&mut h, &[0]);
            fnv(&mut h, &std::fs::read(&f).unwrap_or_default());
            fnv(&mut h, &[0]);
        }
    }
    println!("cargo:rustc-env=WLOC_INPUT_SOURCES_HASH={h:016x}");
}
