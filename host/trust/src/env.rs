//! The environment, read as glibc's `secure_getenv` reads it: in a
//! process running with privileges its caller does not have (setuid or
//! setgid, file capabilities: the kernel's `AT_SECURE`), wloc's variables
//! are ignored, so that whoever starts such a program cannot choose its
//! policy, components, cache or inputs. Every variable wloc reads goes
//! through here.

use std::ffi::OsString;

/// Whether the process runs with privileges its caller lacks.
pub fn secure_mode() -> bool {
    // SAFETY: getauxval only reads the auxiliary vector.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// A variable's value, `None` when unset or in [`secure_mode`].
pub fn var_os(name: &str) -> Option<OsString> {
    if secure_mode() {
        None
    } else {
        std::env::var_os(name)
    }
}

/// A variable's value as UTF-8, `None` when unset, not UTF-8, or in
/// [`secure_mode`].
pub fn var(name: &str) -> Option<String> {
    var_os(name).and_then(|v| v.into_string().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_run_without_privileges() {
        assert!(!secure_mode());
        // A variable every test process has (no test changes the
        // environment its threads share).
        assert_eq!(var("PATH"), std::env::var("PATH").ok());
    }
}
