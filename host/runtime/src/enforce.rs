//! The one enforcement point: every component, built in or not, passes
//! here before it runs.
//!
//! What a component may do is decided by `wloc-trust` ([`admit`] reads
//! its manifest and signature, asks the policy and checks its imports
//! against the [`Grant`]); this module re-exports that decision under its
//! old path and adds the admission of the components built into wloc.
//! The runtime enforces it: [`Runtime::load_admitted`](crate::Runtime::load_admitted)
//! links *only* the granted [`Interfaces`] (a linker per grant, see
//! [`crate::imports`]), and every run of the component goes through
//! [`Grant::narrow`] (see [`crate::RunOptions`]), whatever the caller
//! passed.

pub use wloc_trust::grant::*;
use wloc_trust::policy::Policy;
use wloc_trust::{ComponentError, Limits};

use crate::builtin::Builtin;

/// As [`admit`], for a component built into wloc: its digest is the one
/// recorded when wloc was built, and it runs with `base` limits unless
/// the policy sets others.
pub fn admit_builtin(
    policy: &Policy,
    b: &Builtin,
    base: Limits,
) -> Result<Admission, ComponentError> {
    admit_known(
        policy,
        b.wasm,
        b.digest.to_string(),
        true,
        b.name,
        "built-in",
        base,
    )
}
