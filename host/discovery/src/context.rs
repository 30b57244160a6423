//! The context of a discovery run: the policy file it reads and, once a
//! component needs them, the policy read from it and the component runtime.
//!
//! Like wasmtime's WASI context, which carries a guest's capabilities, a
//! [`Discovery`] is created by its caller and handed to what discovers:
//! nothing reads the policy or starts a runtime behind the caller's back,
//! and two runs in one process (a program loading two topologies) do not
//! share state they did not ask to share.

use std::cell::OnceCell;
use std::path::PathBuf;

use wloc_runtime::Runtime;
use wloc_runtime::policy::Policy;

/// Why the components' policy or runtime is not available.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SetupError {
    /// The policy file could not be read or is not valid (the message
    /// names the file and what is wrong).
    #[error("{0}")]
    Policy(String),
    /// The component runtime (wasmtime's engine) could not start.
    #[error("cannot start the component runtime: {0}")]
    Runtime(String),
}

/// The policy and the runtime of one discovery run.  Both are made on
/// first use, so that a run reading only XML reads no policy and starts no
/// engine, and then shared by discovery and annotation (one engine, one
/// epoch thread, the policy read once).
pub struct Discovery {
    /// The policy file named with `--policy` (else `WLOC_POLICY`, else
    /// the system file).
    policy_path: Option<PathBuf>,
    policy: OnceCell<Result<Policy, SetupError>>,
    runtime: OnceCell<Result<Runtime, SetupError>>,
}

impl Discovery {
    /// A run whose components are checked against the policy file
    /// `policy_path` (`None`: `WLOC_POLICY`, else the system file).
    pub fn new(policy_path: Option<PathBuf>) -> Discovery {
        Discovery {
            policy_path,
            policy: OnceCell::new(),
            runtime: OnceCell::new(),
        }
    }

    /// Whether a policy other than the system's was named (`--policy`,
    /// `WLOC_POLICY`): the published topology, discovered under the
    /// system's, does not stand for a discovery under it.
    pub fn names_a_policy(&self) -> bool {
        self.policy_path.is_some()
            || wloc_trust::env::var_os("WLOC_POLICY").is_some_and(|v| !v.is_empty())
    }

    /// The admin's policy, read on first use.
    pub fn policy(&self) -> Result<&Policy, SetupError> {
        self.policy
            .get_or_init(|| {
                Policy::load(self.policy_path.as_deref())
                    .map_err(|e| SetupError::Policy(e.to_string()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The component runtime, started on first use.
    pub fn runtime(&self) -> Result<&Runtime, SetupError> {
        self.runtime
            .get_or_init(|| Runtime::new().map_err(|e| SetupError::Runtime(e.to_string())))
            .as_ref()
            .map_err(Clone::clone)
    }
}
