//! What a run may use: the files, CPUID answers, settings, limits and log
//! target its caller passes ([`RunOptions`]), narrowed to the grant of a
//! component loaded through the policy ([`Narrow`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use wloc_probe::CpuidSource;
use wloc_trust::Limits;
use wloc_trust::grant::{Grant, Narrow};

use crate::fs::FileAccess;

/// CPUID answers for the `cpuid` import, shared by the runs that get
/// them: executed natively on a PU, or replayed from a recorded dump.
/// The probe's own trait, so one source serves the probe and components.
pub type SharedCpuid = Arc<dyn CpuidSource + Send + Sync>;

/// Where a component's log messages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogTarget {
    /// Standard error, prefixed with the component's name.
    Stderr,
    /// Kept in [`RunOutput::logs`](crate::RunOutput::logs).
    Capture,
    /// Nowhere.
    Discard,
}

/// What a run may use.
#[derive(Clone)]
pub struct RunOptions {
    /// The granted roots.
    pub files: Arc<FileAccess>,
    /// CPUID answers, if granted.
    pub cpuid: Option<SharedCpuid>,
    /// Settings (`config.get`).
    pub config: Arc<BTreeMap<String, String>>,
    /// Limits.
    pub limits: Limits,
    /// Where log messages go.
    pub log: LogTarget,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            files: Arc::new(FileAccess::none()),
            cpuid: None,
            config: Arc::new(BTreeMap::new()),
            limits: Limits::default(),
            log: LogTarget::Stderr,
        }
    }
}

impl RunOptions {
    /// Default options with these settings.
    pub fn with_config<I, K, V>(settings: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RunOptions {
            config: Arc::new(
                settings
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
            ..RunOptions::default()
        }
    }
}

impl Narrow for RunOptions {
    /// File roots outside the grant are dropped, CPUID and settings that
    /// were not granted are removed, and the limits are the grant's.
    fn narrowed(&self, grant: &Grant) -> RunOptions {
        let files = match grant.files_kept(self.files.requested().to_vec()) {
            None => self.files.clone(),
            // Keep what both the caller and the grant name.
            Some(keep) => {
                let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
                Arc::new(
                    FileAccess::new(&keep, self.files.fsroot())
                        .unwrap_or_else(|_| FileAccess::none()),
                )
            }
        };
        let config = self
            .config
            .iter()
            .filter(|(k, _)| grant.caps.config_allows(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        RunOptions {
            files,
            cpuid: if grant.caps.cpuid {
                self.cpuid.clone()
            } else {
                None
            },
            config: Arc::new(config),
            limits: grant.limits.clone(),
            log: self.log,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wloc_trust::grant::Interfaces;
    use wloc_trust::manifest::Capabilities;

    #[test]
    fn narrowing_drops_what_was_not_granted() {
        let grant = Grant {
            caps: Capabilities {
                files: vec!["/proc/self".to_string()],
                cpuid: false,
                config: vec!["keep*".to_string()],
            },
            limits: Limits {
                fuel: 7,
                ..Limits::default()
            },
            interfaces: Interfaces::default(),
        };
        let opts = RunOptions {
            files: Arc::new(FileAccess::new(&["/proc", "/etc"], None).unwrap()),
            config: Arc::new(
                [("keep.me", "1"), ("drop", "2")]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..RunOptions::default()
        };
        let n = grant.narrow(&opts);
        assert_eq!(n.files.roots(), vec!["/proc/self".to_string()]);
        assert_eq!(n.config.keys().collect::<Vec<_>>(), vec!["keep.me"]);
        assert!(n.cpuid.is_none());
        assert_eq!(n.limits.fuel, 7);
    }
}
