//! `wloc-trust`: the trust model of wloc's components, what *decides*
//! whether a component runs and with what.  It compiles nothing and runs
//! nothing (no wasmtime here): `wloc-runtime` links and runs what this
//! crate admits, within the grant it computes.
//!
//! * [`manifest`]: what a component says it is and asks for (a custom
//!   section of the component), read without compiling it;
//! * [`signing`]: publisher signatures (ed25519) over the component's bytes;
//! * [`cosign`], [`sigstore`], [`bundle`]: signatures stored in an OCI
//!   registry beside a component, in cosign's classic format by a key or
//!   by a Sigstore identity (verified offline against a trusted root),
//!   and in the Sigstore bundle format of cosign v3 by a key;
//! * [`policy`]: the admin's policy, which components may run, with what,
//!   within which [`Limits`];
//! * [`grant`]: the decision for one component, its [`grant::Admission`]
//!   and [`grant::Grant`] (roots, CPUID, settings, limits, the
//!   interfaces to link), or its refusal;
//! * [`error`]: the [`ComponentError`] every refusal and failed run ends as;
//! * [`text`], [`digest`], [`limits`]: what all of these share;
//! * [`file`]: reading a file anyone may have made (a topology image or
//!   XML document) as a regular file, bounded, without blocking;
//! * [`atomic`]: writing a file as the old one or the complete new one,
//!   and locking a file several processes edit.
//!
//! Modules only use modules listed after them in this order:
//! `grant` → `policy` → `cosign`, `sigstore` and `bundle` (one unit:
//! keyless signatures and bundles are part of cosign's formats and share
//! its key, signer and error types) → `oci` → `signing` → `manifest` → `error` → `text`,
//! `digest`, `limits`; [`file`] and [`atomic`] use none.

pub mod atomic;
pub mod bundle;
pub mod cosign;
pub mod digest;
pub mod env;
pub mod error;
pub mod file;
pub mod grant;
pub mod limits;
pub mod manifest;
pub mod oci;
pub mod owner;
pub mod policy;
pub mod signing;
pub mod sigstore;
pub mod text;

pub use error::{ComponentError, ErrorKind};
pub use limits::Limits;
