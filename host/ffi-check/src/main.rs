//! `wloc-ffi-check SRC_DIR HEADER...`: checks the C library's sources
//! (`host/capi/src`) against two rules the compiler cannot see, in the
//! spirit of uefi-rs's `xtask check-raw`:
//!
//! - every exported function (`#[no_mangle] extern "C"`) goes through the
//!   entry guard, `guard(...)` or `entry!(...)`, as its whole body: no
//!   panic unwinds into C, and a function taking a topology gets its
//!   handle through the one prologue that carries its safety argument;
//! - every public `#[repr(C)]` structure or union named in hwloc's headers
//!   (files or folders of `.h` files) has the header's fields, in the
//!   header's order (a Rust field `type_` stands for C's `type`, and
//!   `upstream_pci` for the member `pci` of C's nested `upstream`).
//!   Offsets and sizes are the layout test's (`host/capi/tests/layout.rs`);
//!   this check names the field that is missing or out of place;
//! - no modules of the folder import each other in a circle (through
//!   `crate::` paths outside test code, macro bodies included): shared
//!   low-level helpers belong in a leaf module.
//!
//! Exits 1 naming every function and structure that breaks a rule.

mod check;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let Some((src, headers)) = args.split_first() else {
        eprintln!("usage: wloc-ffi-check SRC_DIR HEADER_OR_DIR...");
        return ExitCode::from(2);
    };
    match check::run(src, headers) {
        Ok(report) => {
            for p in &report.problems {
                eprintln!("{p}");
            }
            println!(
                "wloc-ffi-check: {} exported functions, {} C structures checked, {} problems",
                report.functions,
                report.structures,
                report.problems.len()
            );
            if report.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("wloc-ffi-check: {e}");
            ExitCode::from(2)
        }
    }
}
