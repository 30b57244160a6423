//! A hostile discovery component for the host's tests: it asks the host to
//! read one large granted file over and over, in one batch of 65,536
//! copies (`/sys/flood-mode` says `one-batch`) or in endless batches of
//! 64 (`many-batches`), to exhaust the host's memory.  The host must stop
//! it at its read budget with its memory bounded.  Never shipped.

use wloc_hostile_kit::*;

/// The large file: one the test made, else a large file of every kernel.
const TARGETS: &[&str] = &["/sys/flood", "/sys/kernel/btf/vmlinux"];

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    let mode = match &files::read_many(&["/sys/flood-mode".to_string()], 64)[0] {
        Ok(b) => String::from_utf8_lossy(b).trim().to_string(),
        Err(_) => "one-batch".to_string(),
    };
    let target = TARGETS
        .iter()
        .find(|t| files::read_many(&[t.to_string()], 1)[0].is_ok())
        .ok_or("no large file to read")?
        .to_string();
    let (batch, rounds) = if mode == "many-batches" {
        (64, 1 << 20)
    } else {
        (65_536, 1)
    };
    let many = vec![target; batch];
    let mut read = 0u64;
    for _ in 0..rounds {
        for r in files::read_many(&many, 1 << 20).iter().flatten() {
            read += r.len() as u64;
        }
    }
    d.infos.push(info("LEAKED flood read", read.to_string()));
    Ok(d)
}

component!(discover);
